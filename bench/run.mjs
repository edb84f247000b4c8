/**
 * The one runner: runs suites, each in a process of its own, then prints the targets table.
 *
 *   node bench/run.mjs                 the representative pass (`pnpm bench`): every suite, fewer rounds
 *                                      and cells, same method; results in .bench-tmp/quick
 *   node bench/run.mjs --full          the publication run: results in bench/results, then
 *                                      docs/benchmarks.md and docs/charts/bench-*.svg
 *   node bench/run.mjs --smoke         seconds per suite: each runs and measures (CI); .bench-tmp/smoke
 *   node bench/run.mjs redis cluster   some suites (any mode); the table keeps the others' last results
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { environment, FULL, MODE, progress, readResults, resultsDir, SMOKE } from './lib/common.mjs';
import { targetsMarkdown } from './lib/targets.mjs';
import { SUITES, writeReport } from './report.mjs';

const asked = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const unknown = asked.filter((s) => !SUITES.includes(s));
if (unknown.length > 0) {
  console.error(`unknown suite ${unknown.join(', ')}; expected some of ${SUITES.join(', ')}`);
  process.exit(2);
}
const suites = asked.length > 0 ? asked : SUITES;
const dir = resultsDir();
mkdirSync(dir, { recursive: true });

const started = Date.now();
const lifecycle = process.env.npm_lifecycle_event;
const command =
  `${lifecycle?.startsWith('bench') ? `pnpm ${lifecycle}` : 'node bench/run.mjs'} ${process.argv.slice(2).join(' ')}`.trim();
const env = { ...environment(), mode: MODE, date: new Date().toISOString(), command, suites };
const failed = [];
/** The suite running: stopped with the runner (its servers and workers end with it). */
let current;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    current?.kill(signal);
    process.exit(1);
  });
}
for (const suite of suites) {
  progress(`${suite}: starting (${MODE})`);
  const t = Date.now();
  const script = fileURLToPath(new URL(`./suites/${suite}.mjs`, import.meta.url));
  current = spawn(process.execPath, [script], {
    stdio: 'inherit',
    env: { ...process.env, SLUICE_BENCH_MODE: MODE },
  });
  const status = await new Promise((resolve) => current.once('exit', resolve));
  progress(`${suite}: ${status === 0 ? 'done' : 'FAILED'} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  if (status !== 0) failed.push(suite);
}
env.totalSeconds = (Date.now() - started) / 1000;
writeFileSync(join(dir, 'environment.json'), `${JSON.stringify(env, null, 1)}\n`);

const results = readResults(dir, SUITES);
if (SMOKE) {
  // A smoke run is good when every suite it ran wrote rows whose main figure is positive and finite.
  const main = {
    core: (r) => r.opsPerSec.median,
    redis: (r) => r.decisionsPerSec.median,
    cluster: (r) => r.decisionsPerSec.median,
    http: (r) => r.rps.median,
    atomicity: (r) => r.admitted,
    memory: (r) => r.after.rss,
    postgres: (r) => r.decisionsPerSec.median,
    edge: (r) => r.cpuUsPerDecision.median,
  };
  for (const suite of suites.filter((s) => !failed.includes(s))) {
    const rows = results[suite]?.rows ?? [];
    if (rows.length === 0 || !rows.every((r) => Number.isFinite(main[suite](r)) && main[suite](r) > 0)) {
      progress(`${suite}: ran but produced no usable numbers`);
      failed.push(suite);
    }
  }
}
console.log(`\n## Targets (${MODE} run${SMOKE ? ': the numbers prove the suites run, nothing more' : ''})\n`);
console.log(targetsMarkdown(results));
if (FULL) progress(`wrote ${writeReport(dir).join(', ')}`);
progress(
  `${suites.length - failed.length}/${suites.length} suites ran in ${env.totalSeconds.toFixed(0)} s; results in ${dir}`,
);
if (failed.length > 0) {
  progress(`failed: ${failed.join(', ')}`);
  process.exit(1);
}

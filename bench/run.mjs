/**
 * Runs the benchmark suites, each in a process of its own, then writes docs/benchmarks.md and the
 * charts from their results.
 *
 *   node bench/run.mjs                    every suite (what `pnpm bench` runs, after `pnpm build`)
 *   node bench/run.mjs core redis         some suites; the report keeps the others' last results
 *   node bench/run.mjs --smoke            a few seconds per suite: checks that each one runs and
 *                                         produces numbers (CI); writes to .bench-tmp, not docs/
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { progress, resultsDir, SMOKE } from './lib/cli.mjs';
import { environment } from './lib/environment.mjs';
import { writeReport } from './report.mjs';

const SUITES = ['core', 'redis', 'http', 'atomicity', 'memory'];
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
const env = { ...environment(), date: new Date().toISOString(), command: commandLine() };
const failed = [];
for (const suite of suites) {
  progress(`${suite}: starting${SMOKE ? ' (smoke)' : ''}`);
  const t = Date.now();
  const result = spawnSync(
    process.execPath,
    [fileURLToPath(new URL(`./suites/${suite}.mjs`, import.meta.url)), ...(SMOKE ? ['--smoke'] : [])],
    { stdio: 'inherit' },
  );
  progress(
    `${suite}: ${result.status === 0 ? 'done' : 'FAILED'} in ${((Date.now() - t) / 1000).toFixed(1)} s`,
  );
  if (result.status !== 0) failed.push(suite);
}
env.totalSeconds = (Date.now() - started) / 1000;
writeFileSync(join(dir, 'environment.json'), `${JSON.stringify(env, null, 1)}\n`);

if (SMOKE) {
  const empty = suites.filter((s) => !failed.includes(s) && !producedNumbers(s));
  for (const s of empty) progress(`${s}: ran but produced no usable numbers`);
  failed.push(...empty);
  progress(
    `smoke: ${suites.length - failed.length}/${suites.length} suites ran and measured, ${env.totalSeconds.toFixed(0)} s`,
  );
} else {
  progress(`wrote ${writeReport(dir)} (${env.totalSeconds.toFixed(0)} s)`);
}
if (failed.length > 0) {
  progress(`failed: ${failed.join(', ')}`);
  process.exit(1);
}

/** The command as a user would type it. */
function commandLine() {
  const args = process.argv.slice(2);
  if (process.env.npm_lifecycle_event?.startsWith('bench')) return `pnpm ${process.env.npm_lifecycle_event}`;
  return `node bench/run.mjs${args.length ? ` ${args.join(' ')}` : ''}`;
}

/** A smoke result is good when every row carries a positive, finite main figure. */
function producedNumbers(suite) {
  let data;
  try {
    data = JSON.parse(readFileSync(join(dir, `${suite}.json`), 'utf8'));
  } catch {
    return false;
  }
  const main = {
    core: (r) => r.opsPerSec.median,
    redis: (r) => r.decisionsPerSec.median,
    http: (r) => r.rps.median,
    atomicity: (r) => r.admitted,
    memory: (r) => r.after.rss,
  }[suite];
  const values = data.rows.map(main);
  for (const r of data.rows) progress(`  ${suite}: ${summaryOf(suite, r)}`);
  return values.length > 0 && values.every((v) => Number.isFinite(v) && v > 0);
}

function summaryOf(suite, r) {
  const m = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)}M` : `${(x / 1e3).toFixed(1)}k`);
  switch (suite) {
    case 'core':
      return `${r.path} ${r.impl} ${r.case} ${r.api} ${r.subjects}: ${m(r.opsPerSec.median)}/s`;
    case 'redis':
      return `${r.impl} ${r.case}: ${m(r.decisionsPerSec.median)}/s, Redis CPU ${r.redisCpuMsPer1000.median.toFixed(2)} ms/1000, ${r.bytesPerSubject.median.toFixed(0)} B/subject`;
    case 'http':
      return `${r.framework} ${r.kind} ${r.path} ${r.subjects}: ${m(r.rps.median)} req/s (${(r.ratioToBare.median * 100).toFixed(0)}% of bare)`;
    case 'atomicity':
      return `${r.variant} ${r.case}: ${r.admitted} admitted${r.burned === undefined ? '' : `, ${r.burned} burned`}`;
    default:
      return `${r.config}: ${(r.after.rss / 2 ** 20).toFixed(0)} MiB`;
  }
}

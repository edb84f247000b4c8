import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The bench package's directory and the repository root. */
export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT_DIR = join(BENCH_DIR, '..');

/** `--smoke` runs a suite for a few seconds: it proves the suite runs and measures, nothing more. */
export const SMOKE = process.argv.includes('--smoke');

/** Where suites write their results: bench/results for full runs, .bench-tmp for smoke runs. */
export function resultsDir(smoke = SMOKE) {
  return process.env.SLUICE_BENCH_OUT ?? join(ROOT_DIR, smoke ? '.bench-tmp/smoke' : 'bench/results');
}

/** Writes a suite's results as JSON; the report is built from these files. */
export function writeResults(suite, data) {
  const file = join(resultsDir(), `${suite}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    `${JSON.stringify({ suite, smoke: SMOKE, date: new Date().toISOString(), ...data }, null, 1)}\n`,
  );
  return file;
}

/** Progress on stderr, so a long run shows it is alive. */
export function progress(message) {
  process.stderr.write(`[bench] ${message}\n`);
}

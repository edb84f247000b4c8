/**
 * What every suite shares: the run's mode and where results go, statistics over rounds, the policies
 * measured, client addresses, and the environment of a run.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT_DIR = join(BENCH_DIR, '..');

/**
 * smoke: seconds per suite, proves each runs and measures (CI). quick: the representative pass of
 * `pnpm bench` (fewer rounds and cells, same method). full: the publication run (`pnpm bench --full`).
 */
export const MODE =
  process.env.SLUICE_BENCH_MODE ??
  (process.argv.includes('--smoke') ? 'smoke' : process.argv.includes('--full') ? 'full' : 'quick');
// A suite stopped by a signal still runs its 'exit' handlers (a redis-server of its own is ended there).
for (const signal of ['SIGINT', 'SIGTERM']) {
  // Unless the process has a handler of its own (the runner stops its suite first).
  process.once(signal, () => process.listenerCount(signal) === 0 && process.exit(1));
}

export const SMOKE = MODE === 'smoke';
export const FULL = MODE === 'full';

/** The settings of this run's mode. */
export const pick = (byMode) => byMode[MODE];

/** bench/results for the full run (the page is built from it); .bench-tmp/<mode> otherwise. */
export function resultsDir(mode = MODE) {
  return (
    process.env.SLUICE_BENCH_OUT ?? join(ROOT_DIR, mode === 'full' ? 'bench/results' : `.bench-tmp/${mode}`)
  );
}

/** A suite's results as JSON, one row a line. */
export function writeResults(suite, data) {
  const file = join(resultsDir(), `${suite}.json`);
  mkdirSync(dirname(file), { recursive: true });
  const { rows = [], ...rest } = { suite, mode: MODE, date: new Date().toISOString(), ...data };
  const body = rows.map((r) => `  ${JSON.stringify(r)}`).join(',\n');
  writeFileSync(file, `${JSON.stringify(rest).slice(0, -1)},\n"rows": [\n${body}\n]}\n`);
  progress(`${suite}: wrote ${file}`);
}

export function readResults(dir, names) {
  const results = {};
  for (const name of names) {
    try {
      results[name] = JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8'));
    } catch {}
  }
  return results;
}

/** Progress on stderr, so that a long run shows it is alive. */
export function progress(message) {
  process.stderr.write(`[bench] ${message}\n`);
}

export function median(values) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Median and min–max of the rounds: the median is reported, the range is the noise. */
export function summarize(values) {
  const finite = values.filter(Number.isFinite);
  const none = finite.length === 0;
  return {
    median: median(finite),
    min: none ? Number.NaN : Math.min(...finite),
    max: none ? Number.NaN : Math.max(...finite),
    rounds: values,
  };
}

/** The q-quantile (0..1) of unsorted samples, nearest rank. */
export function quantile(samples, q) {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** Never reached: at millions of calls a second no one-minute window fills (limit × window < 2^50). */
export const UNREACHED = 1_000_000_000;

/**
 * Buckets forget a subject once full again, so they are measured in the steady state the window
 * counters have: a refill of 1,000 an hour and a capacity no benchmark empties.
 */
const BUCKET = { limit: 1000, window: '1h', burst: 100_000_000 };

/**
 * One policy per algorithm, named as a user would (the name is in every Redis key). The log and the
 * leases keep an entry per call: sliding-log at 100 per 10 s (a hot subject is mostly denied),
 * concurrency at 100 leases, each given back at once.
 */
export const ALGORITHM_POLICIES = [
  { name: 'per-minute', algorithm: 'sliding-window', limit: UNREACHED, window: '1m' },
  { name: 'per-minute', algorithm: 'fixed-window', limit: UNREACHED, window: '1m' },
  { name: 'per-10s', algorithm: 'sliding-log', limit: 100, window: '10s' },
  { name: 'hourly', algorithm: 'token-bucket', ...BUCKET },
  { name: 'hourly', algorithm: 'leaky-bucket', ...BUCKET },
  { name: 'hourly', algorithm: 'gcra', ...BUCKET },
  { name: 'in-flight', algorithm: 'concurrency', limit: 100, window: '1m' },
];

/** Cases: a label and a limiter's policies; "two policies" is a window and a bucket decided together. */
export const LIMITER_CASES = [
  ...ALGORITHM_POLICIES.map((p) => ({ label: p.algorithm, policies: [p] })),
  {
    label: 'two policies',
    policies: [ALGORITHM_POLICIES[0], { name: 'bucket', algorithm: 'token-bucket', ...BUCKET }],
  },
];
export const policiesOf = (label) => LIMITER_CASES.find((c) => c.label === label).policies;

/** A concurrency decision holds a lease: the benchmarks give it back at once. */
export const takesLease = (policies) => policies.some((p) => p.algorithm === 'concurrency');

/**
 * A limiter on a shared store as the suites call it: `call(subject)` resolves to whether admitted,
 * giving a lease back at once when `release`; `degraded()` counts decisions taken without the store
 * (an error, or an answer slower than storeTimeout): none of them is the store's.
 */
export function storeCalls(limiter, policies, release = true) {
  const leases = release && takesLease(policies);
  let degraded = 0;
  return {
    limiter,
    degraded: () => degraded,
    async call(subject) {
      const d = await limiter.consume(subject);
      if (d.degraded) degraded++;
      if (leases) await d.release?.();
      return d.allowed;
    },
  };
}

/** The address of client `i`, as the load generator sends it in X-Forwarded-For. */
export const clientAddress = (i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
export const subjects = (n) => Array.from({ length: n }, (_, i) => clientAddress(i));

function output(command, args) {
  try {
    return execFileSync(command, args, {
      encoding: 'utf8',
      cwd: ROOT_DIR,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  } catch {
    return '';
  }
}

/** The machine and software a run measured. */
export function environment() {
  const version = (name) => {
    try {
      return JSON.parse(readFileSync(join(BENCH_DIR, 'node_modules', name, 'package.json'), 'utf8')).version;
    } catch {
      return 'not installed';
    }
  };
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    redis: /v=(\S+)/.exec(output('redis-server', ['--version']))?.[1] ?? 'not installed',
    packages: Object.fromEntries(
      Object.keys(JSON.parse(readFileSync(join(BENCH_DIR, 'package.json'), 'utf8')).devDependencies)
        .filter((name) => !name.startsWith('@sluice/') || name === '@sluice/core')
        .map((name) => [name, version(name)]),
    ),
    commit: output('git', ['rev-parse', '--short', 'HEAD']).trim() || 'unknown',
    dirty: output('git', ['status', '--porcelain']).trim() !== '',
    loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

/**
 * Runs `call` over `population` round robin with `inFlight` calls outstanding, until `until(done)`:
 * how many calls, how many were refused (`call` resolved false), and each call's latency in ms. A call
 * that throws ends the run, unless `countErrors`, where it is counted in `errors` (and in
 * `done`, not in `refused`).
 */
export async function drive(call, population, until, { inFlight, countErrors = false }) {
  const latencies = [];
  let next = 0;
  let done = 0;
  let refused = 0;
  let errors = 0;
  const worker = async () => {
    while (!until(done)) {
      const s = population[next];
      if (++next === population.length) next = 0;
      const t = process.hrtime.bigint();
      try {
        if (!(await call(s))) refused++;
      } catch (error) {
        if (!countErrors) throw error;
        errors++;
      }
      latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      done++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { done, refused, errors, latencies };
}

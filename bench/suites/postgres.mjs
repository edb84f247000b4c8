/**
 * PostgreSQL (issue 30), on one server the suite starts (bench/lib/postgres.mjs), three parts:
 *   1. decisions/s and p99 at 64 in flight from one Node process: Sluice's PostgresStore (sliding
 *      window; two policies) beside rate-limiter-flexible's RateLimiterPostgres (fixed window; two
 *      limiters in a RateLimiterUnion), each on a `pg` Pool of the same size, many subjects round
 *      robin, and one hot subject;
 *   2. 8 processes crossing overlapping keys (each call several policies, their order differing
 *      between processes, a global policy in one limiter): deadlocks (pg_stat_database) and errors;
 *   3. 20,000 subjects of a 1 s window, then ordinary traffic: the table's rows over time (the store
 *      sweeps expired rows as it writes; the app only calls consume) and n_dead_tup.
 */

import { fork } from 'node:child_process';
import { subscribe } from 'node:diagnostics_channel';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import {
  drive,
  pick,
  policiesOf,
  progress,
  quantile,
  SMOKE,
  subjects,
  summarize,
  UNREACHED,
  writeResults,
} from '../lib/common.mjs';
import {
  deadlocks,
  provokedDeadlocks,
  rateLimiterPostgres,
  sluiceOnPostgres,
  startPostgres,
  tableRows,
} from '../lib/postgres.mjs';
import { TARGETS } from '../lib/targets.mjs';

const IN_FLIGHT = 64;
/** pg's own default Pool size: what an app gets without choosing. Both libraries get a pool this size. */
const POOL_SIZE = 10;
const WORKERS = 8;
const settings = pick({
  smoke: { rounds: 1, seconds: 0.3, subjects: 1_000, crossSeconds: 3, churn: 5_000, trafficSeconds: 4 },
  quick: { rounds: 3, seconds: 1, subjects: 10_000, crossSeconds: 10, churn: 20_000, trafficSeconds: 8 },
  full: { rounds: 5, seconds: 2, subjects: 10_000, crossSeconds: 60, churn: 20_000, trafficSeconds: 15 },
});
const peer = { limit: UNREACHED, windowMs: 60_000 };

/** `drive` with IN_FLIGHT calls outstanding (or `inFlight`); a failing call is counted in `errors`. */
const driven = (call, population, until, inFlight = IN_FLIGHT) =>
  drive(call, population, until, { inFlight, countErrors: true });

/** Part 1's rows: each with a pool of its own, so that no row's connections wait on another's. */
async function entries(server) {
  const pools = [];
  const pool = () => {
    const p = server.pool(POOL_SIZE);
    pools.push(p);
    return p;
  };
  const rlf = (prefix, second) =>
    rateLimiterPostgres(pool(), { ...peer, prefix, table: 'rlf_limits' }, second && { ...peer, ...second });
  // Limiters of their own names, so that no row finds another's rows (the key holds the name).
  const sluice = (label, name) => sluiceOnPostgres(pool(), { name, policies: policiesOf(label) });
  const rows = [
    ['sluice', 'sliding-window', 'many', sluice('sliding-window', 'one')],
    ['rate-limiter-flexible', 'RateLimiterPostgres', 'many', await rlf('one')],
    ['sluice', 'two policies', 'many', sluice('two policies', 'two')],
    [
      'rate-limiter-flexible',
      'two limiters (RateLimiterUnion)',
      'many',
      await rlf('a', { prefix: 'b', table: 'rlf_limits' }),
    ],
    ['sluice', 'sliding-window', 'hot', sluice('sliding-window', 'hot')],
    ['rate-limiter-flexible', 'RateLimiterPostgres', 'hot', await rlf('hot')],
  ];
  return {
    list: rows.map(([impl, label, shape, limiter]) => ({ impl, case: label, subjects: shape, ...limiter })),
    end: () => Promise.all(pools.map((p) => p.end())),
  };
}

async function throughput(server) {
  const many = subjects(settings.subjects);
  const { list, end } = await entries(server);
  const perEntry = new Map(list.map((e) => [e, []]));
  try {
    for (let round = 0; round < settings.rounds; round++) {
      // A different order each round, so that no row always runs right after the same neighbour.
      for (const entry of round % 2 === 0 ? list : [...list].reverse()) {
        const population = entry.subjects === 'hot' ? ['hot-subject'] : many;
        // Every subject has its rows before the first timed pass: updates are measured, not inserts.
        if (round === 0) await driven(entry.call, population, (n) => n >= population.length);
        const started = process.hrtime.bigint();
        const deadline = Date.now() + settings.seconds * 1000;
        const run = await driven(entry.call, population, () => Date.now() >= deadline);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        perEntry.get(entry).push({
          decisionsPerSec: run.done / seconds,
          p99Ms: quantile(run.latencies, 0.99),
          refused: run.refused,
          errors: run.errors,
        });
      }
      progress(`postgres: throughput round ${round + 1}/${settings.rounds} done`);
    }
  } finally {
    await end();
  }
  return list.map((entry) => {
    const rounds = perEntry.get(entry);
    const sum = (name) => rounds.reduce((n, r) => n + r[name], 0);
    return {
      impl: entry.impl,
      case: entry.case,
      subjects: entry.subjects,
      decisionsPerSec: summarize(rounds.map((r) => r.decisionsPerSec)),
      p99Ms: summarize(rounds.map((r) => r.p99Ms)),
      failed: sum('refused') + sum('errors'),
      degraded: entry.degraded?.() ?? 0,
    };
  });
}

/**
 * Part 2's limiters in worker `index`: the same names (so the same keys) in every worker, the
 * policies in an order that differs between workers, so that batches lock shared rows reached in
 * different orders; one limiter adds a global policy every one of its calls writes.
 */
function crossLimiters(pool, index) {
  const rotate = (list) => list.map((_, i) => list[(i + index) % list.length]);
  const three = [
    { name: 'per-second', algorithm: 'sliding-window', limit: 50, window: '1s' },
    { name: 'per-minute', algorithm: 'fixed-window', limit: 1000, window: '1m' },
    { name: 'bucket', algorithm: 'token-bucket', limit: 20, window: '1s', burst: 40 },
  ];
  const global = [
    { name: 'everyone', algorithm: 'sliding-window', limit: UNREACHED, window: '1m', scope: 'global' },
    { name: 'per-second', algorithm: 'sliding-window', limit: 50, window: '1s' },
  ];
  return [
    sluiceOnPostgres(pool, { name: 'cross', policies: rotate(three) }),
    sluiceOnPostgres(pool, { name: 'cross-global', policies: rotate(global) }),
  ];
}

/** A part 2 worker: consumes random limiters on random shared subjects until told the time is up. */
async function crossWorker(port, index, seconds) {
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres', max: 2 });
  const limiters = crossLimiters(pool, index);
  const errors = [];
  subscribe('sluice:store-error', (m) => errors.push(m.error));
  // Few subjects, so that every worker's batches meet the others' on the same rows.
  const shared = subjects(200);
  const pickOne = () => shared[Math.floor(Math.random() * shared.length)];
  const deadline = Date.now() + seconds * 1000;
  const call = () => limiters[Math.floor(Math.random() * limiters.length)].call(pickOne());
  const run = await driven(call, [0], () => Date.now() >= deadline, 16);
  await pool.end();
  const report = {
    calls: run.done,
    rejected: run.errors,
    storeErrors: errors.length,
    sample: errors.slice(0, 3),
    degraded: limiters.reduce((n, l) => n + l.degraded(), 0),
  };
  // Sent, then gone: nothing of the worker may outlive its part.
  process.send(report, () => process.exit(0));
}

async function crossing(server) {
  const before = await deadlocks(server.admin);
  const script = fileURLToPath(import.meta.url);
  const reports = await Promise.all(
    Array.from({ length: WORKERS }, (_, i) => {
      const child = fork(script, ['--cross', String(server.port), String(i), String(settings.crossSeconds)]);
      return new Promise((resolve, reject) => {
        child.once('message', resolve);
        child.once(
          'exit',
          (code) => code !== 0 && reject(new Error(`a crossing worker exited with ${code}`)),
        );
      });
    }),
  );
  // Backends report their counters when they end (the workers' pools have closed); a moment for that.
  await new Promise((r) => setTimeout(r, 1500));
  const after = await deadlocks(server.admin);
  const sum = (name) => reports.reduce((n, r) => n + r[name], 0);
  return {
    // The counter read, shown to count: one deadlock made on purpose after the run moves it by this.
    counterCheck: await provokedDeadlocks(server),
    workers: WORKERS,
    seconds: settings.crossSeconds,
    calls: sum('calls'),
    deadlocks: after - before,
    errors: sum('rejected') + sum('storeErrors'),
    degraded: sum('degraded'),
    sample: reports.flatMap((r) => r.sample).slice(0, 3),
  };
}

/** Part 3: many short-lived subjects, then a little ordinary traffic; the table sampled as it goes. */
async function churn(server) {
  const table = 'bench_churn';
  const pool = server.pool(POOL_SIZE);
  const policies = [{ name: 'per-second', algorithm: 'sliding-window', limit: 100, window: '1s' }];
  const limiter = sluiceOnPostgres(pool, { name: 'churn', policies, table });
  try {
    const fill = await driven(limiter.call, subjects(settings.churn), (n) => n >= settings.churn);
    const samples = [];
    const sample = async (t) =>
      samples.push({ t: Math.round(t * 10) / 10, ...(await tableRows(server.admin, table)) });
    await sample(0);
    // Ordinary traffic: a few hundred subjects of its own, the app calling nothing but consume.
    const ordinary = Array.from({ length: 300 }, (_, i) => `ordinary-${i}`);
    const started = Date.now();
    const deadline = started + settings.trafficSeconds * 1000;
    const traffic = driven(limiter.call, ordinary, () => Date.now() >= deadline);
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      await sample((Date.now() - started) / 1000);
    }
    const run = await traffic;
    // Statistics reach pg_stat_user_tables when the pool's backends report (at the latest when they end).
    await pool.end();
    await new Promise((r) => setTimeout(r, 1000));
    await sample((Date.now() - started) / 1000);
    const below = samples.find((s) => s.t > 0 && s.rows < settings.churn * TARGETS.postgres.shrinkShare);
    return {
      subjects: settings.churn,
      windowMs: 1000,
      trafficSeconds: settings.trafficSeconds,
      trafficCalls: run.done,
      errors: fill.errors + run.errors + limiter.degraded(),
      belowTargetAfterS: below?.t ?? null,
      samples,
    };
  } finally {
    await pool.end().catch(() => {});
  }
}

if (process.argv[2] === '--cross') {
  await crossWorker(Number(process.argv[3]), Number(process.argv[4]), Number(process.argv[5]));
} else {
  const started = Date.now();
  const server = await startPostgres();
  progress(`postgres: PostgreSQL ${server.version} on port ${server.port}`);
  try {
    const rows = await throughput(server);
    for (const r of rows)
      progress(
        `postgres: ${r.impl} ${r.case}, ${r.subjects}: ${r.decisionsPerSec.median.toFixed(0)}/s, p99 ${r.p99Ms.median.toFixed(1)} ms`,
      );
    const cross = await crossing(server);
    progress(
      `postgres: ${cross.workers} workers crossing keys for ${cross.seconds} s: ${cross.calls} calls, ${cross.deadlocks} deadlocks, ${cross.errors} errors`,
    );
    const expiry = await churn(server);
    progress(
      `postgres: ${expiry.subjects} short-lived subjects: rows ${expiry.samples.map((s) => s.rows).join(' → ')}`,
    );
    const require = createRequire(import.meta.url);
    writeResults('postgres', {
      settings: { ...settings, inFlight: IN_FLIGHT, poolSize: POOL_SIZE, smoke: SMOKE },
      postgresVersion: server.version,
      pgVersion: require('pg/package.json').version,
      durationMs: Date.now() - started,
      cross,
      churn: expiry,
      rows,
    });
  } finally {
    await server.stop();
  }
}

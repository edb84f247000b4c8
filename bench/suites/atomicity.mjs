/**
 * Atomicity: 4 processes each fire 500 concurrent calls for one subject against a limit of 1,000 in a
 * long window, on one redis-server; exactly 1,000 admitted is correct. The two-policy variant adds a
 * wide policy (100,000) beside the strict one and reads how much of the wide quota denied calls burned
 * (zero is correct). The peers have no multi-policy call: two limiters in series, as usually mounted.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { RateLimiterRedis, RateLimiterUnion } from 'rate-limiter-flexible';
import { ALGORITHM_POLICIES, progress, SMOKE, writeResults } from '../lib/common.mjs';
import {
  connect,
  fastifyRedis,
  rateLimiterFlexible,
  rateLimitRedis,
  sluiceOnRedis,
  startRedis,
} from '../lib/redis.mjs';

const PROCESSES = 4;
const CALLS = 500;
const SUBJECT = 'one-subject';
const LIMIT = 1000;
const WIDE_LIMIT = 100_000;
const WINDOW_MS = 3_600_000;
const strict = { limit: LIMIT, windowMs: WINDOW_MS };
const wide = { limit: WIDE_LIMIT, windowMs: WINDOW_MS };
const PEERS = {
  'rate-limiter-flexible': rateLimiterFlexible,
  'rate-limit-redis': rateLimitRedis,
  '@fastify/rate-limit': fastifyRedis,
};

/** How each library charges two policies: Sluice in one call; the peers, with no multi-policy call, as usually mounted. */
const ORDER = {
  sluice: 'one call, all-or-nothing',
  'rate-limiter-flexible': 'RateLimiterUnion (consumes every limiter)',
  'rate-limit-redis': 'wide middleware, then strict',
  '@fastify/rate-limit': 'outer plugin (wide), then inner (strict)',
};

/**
 * One case: `sluice:<algorithm>` or a peer's name (one policy), or `wide:<name>` (two policies, with
 * `wideCount()`: what the wide policy charged the subject). Sluice keeps its leases: a concurrency
 * limit counts calls in flight, and all of them are. Its storeTimeout is 10 s (sluiceOnRedis): 2,000
 * calls at once on a busy machine can take longer than the default, and the fallback would decide.
 */
function buildCase(client, name) {
  const [kind, rest] = name.split(':');
  if (kind === 'sluice') {
    const policies = [{ algorithm: rest, limit: LIMIT, window: WINDOW_MS }];
    return sluiceOnRedis(client, { name: `atomicity-${rest}`, policies, release: false });
  }
  if (kind !== 'wide') return PEERS[name](client, { ...strict, prefix: 'strict-' });
  if (rest === 'sluice') {
    const policies = [
      { name: 'strict', limit: LIMIT, window: WINDOW_MS },
      { name: 'wide', limit: WIDE_LIMIT, window: WINDOW_MS },
    ];
    const { limiter, call, degraded } = sluiceOnRedis(client, { name: 'atomicity-two', policies });
    const peek = async () => (await limiter.peek(SUBJECT)).policies.find((p) => p.name === 'wide').remaining;
    return { call, degraded, wideCount: async () => WIDE_LIMIT - (await peek()) };
  }
  const w = PEERS[rest](client, { ...wide, prefix: 'wide-' });
  const wideCount = () => w.count(SUBJECT);
  if (rest !== 'rate-limiter-flexible') {
    const s = PEERS[rest](client, { ...strict, prefix: 'strict-' });
    return { call: async (subject) => (await w.call(subject)) && s.call(subject), wideCount };
  }
  const s = new RateLimiterRedis({
    storeClient: client,
    points: LIMIT,
    duration: 3600,
    keyPrefix: 'strict-',
  });
  const union = new RateLimiterUnion(s, w.limiter);
  const call = (subject) =>
    union.consume(subject).then(
      () => true,
      (refusal) => {
        if (refusal instanceof Error) throw refusal;
        return false;
      },
    );
  return { call, wideCount };
}

/** The processes, started once: each connects, then takes cases one at a time. */
function startProcesses(port) {
  const children = Array.from({ length: PROCESSES }, () =>
    fork(fileURLToPath(import.meta.url), ['--worker', String(port)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const next = (child, type) =>
    new Promise((resolve, reject) => {
      const onExit = (code) => reject(new Error(`an atomicity process exited with ${code}`));
      const onMessage = (m) => {
        if (m.type !== type) return;
        child.off('message', onMessage).off('exit', onExit);
        resolve(m);
      };
      child.on('message', onMessage).once('exit', onExit);
    });
  return {
    /** Lets every process build the case, fires them together, sums what they admitted. */
    async run(caseName) {
      const ready = children.map((c) => next(c, 'ready'));
      for (const c of children) c.send({ type: 'case', caseName });
      await Promise.all(ready);
      const reports = children.map((c) => next(c, 'done'));
      for (const c of children) c.send({ type: 'go' });
      const done = await Promise.all(reports);
      const sum = (field) => done.reduce((n, m) => n + m[field], 0);
      return { admitted: sum('admitted'), degraded: sum('degraded') };
    },
    stop: () => {
      for (const c of children) c.kill();
    },
  };
}

if (process.argv[2] === '--worker') {
  const connecting = connect('ioredis', Number(process.argv[3]));
  process.on('disconnect', () => process.exit(0));
  let current;
  process.on('message', async ({ type, caseName }) => {
    if (type === 'case') {
      current = buildCase(await connecting, caseName);
      return process.send({ type: 'ready' });
    }
    const results = await Promise.all(Array.from({ length: CALLS }, () => current.call(SUBJECT)));
    process.send({
      type: 'done',
      admitted: results.filter(Boolean).length,
      degraded: current.degraded?.() ?? 0,
    });
  });
} else {
  const started = Date.now();
  const server = await startRedis();
  const client = await connect('ioredis', server.port);
  progress(`atomicity: redis-server ${server.version} on port ${server.port}`);
  const processes = startProcesses(server.port);
  try {
    const single = [...ALGORITHM_POLICIES.map((p) => `sluice:${p.algorithm}`), ...Object.keys(PEERS)];
    const rows = [];
    // The smoke run keeps one case of each kind: it proves the processes run, not the numbers.
    for (const caseName of SMOKE ? [single[0], single.at(-1)] : single) {
      await server.admin.flushall();
      const { admitted, degraded } = await processes.run(caseName);
      rows.push({
        variant: 'one policy',
        case: caseName,
        calls: PROCESSES * CALLS,
        limit: LIMIT,
        admitted,
        degraded,
      });
    }
    for (const caseName of SMOKE ? ['sluice'] : Object.keys(ORDER)) {
      await server.admin.flushall();
      const { admitted, degraded } = await processes.run(`wide:${caseName}`);
      const wideCharged = await buildCase(client, `wide:${caseName}`).wideCount();
      const order = ORDER[caseName];
      rows.push({
        variant: 'two policies',
        case: caseName,
        calls: PROCESSES * CALLS,
        admitted,
        degraded,
        wideCharged,
        burned: wideCharged - admitted,
        order,
      });
    }
    for (const r of rows)
      progress(
        `atomicity: ${r.variant}, ${r.case}: ${r.admitted} admitted${r.burned ? `, ${r.burned} burned` : ''}`,
      );
    const atomicitySettings = {
      processes: PROCESSES,
      callsPerProcess: CALLS,
      limit: LIMIT,
      wideLimit: WIDE_LIMIT,
    };
    writeResults('atomicity', {
      settings: atomicitySettings,
      redisVersion: server.version,
      durationMs: Date.now() - started,
      rows,
    });
  } finally {
    processes.stop();
    client.end();
    await server.stop();
  }
}

/**
 * Suite 4, atomicity: 4 processes each fire 500 concurrent calls for one subject against a limit of
 * 1,000 in a long window, on one redis-server. Counts how many were admitted (exactly 1,000 is
 * correct). The two-policy variant adds a wide policy (100,000) beside the strict one and reads how
 * much of the wide quota the denied calls burned (zero is correct).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Redis from 'ioredis';
import { progress, SMOKE, writeResults } from '../lib/cli.mjs';
import { ALGORITHM_POLICIES } from '../lib/policies.mjs';
import { hasSluiceRedisStore } from '../lib/redis-limiters.mjs';
import { startRedis } from '../lib/redis-server.mjs';
import { buildCase, CASES_WIDE, LIMIT, WIDE_LIMIT } from './atomicity-cases.mjs';

const PROCESSES = 4;
const CALLS = 500;
const WORKER = fileURLToPath(new URL('./atomicity-worker.mjs', import.meta.url));

/** Starts the workers, lets them all connect, fires them together, sums what they admitted. */
async function runCase(port, caseName) {
  const workers = Array.from({ length: PROCESSES }, () =>
    fork(WORKER, [String(port), caseName, String(CALLS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  const message = (w, type) =>
    new Promise((resolve, reject) => {
      w.on('message', (m) => m.type === type && resolve(m));
      w.on('exit', (code) => code !== 0 && reject(new Error(`${caseName}: a worker exited with ${code}`)));
    });
  await Promise.all(workers.map((w) => message(w, 'ready')));
  const reports = workers.map((w) => message(w, 'done'));
  for (const w of workers) w.send('go');
  const done = await Promise.all(reports);
  const sum = (field) => done.reduce((n, m) => n + m[field], 0);
  return { admitted: sum('admitted'), degraded: sum('degraded') };
}

const started = Date.now();
const server = await startRedis();
const admin = new Redis({ port: server.port, host: '127.0.0.1' });
progress(`atomicity: redis-server ${server.version} on port ${server.port}`);
try {
  const single = [
    ...(hasSluiceRedisStore ? ALGORITHM_POLICIES.map((p) => `sluice:${p.algorithm}`) : []),
    'rate-limiter-flexible',
    'rate-limit-redis',
    '@fastify/rate-limit',
  ];
  const wide = Object.keys(CASES_WIDE).filter((c) => hasSluiceRedisStore || !c.startsWith('sluice'));
  const rows = [];
  // The smoke run keeps one case of each kind: it proves the workers run, not the numbers.
  for (const caseName of SMOKE ? [single[0], single.at(-1)] : single) {
    await admin.flushall();
    const { admitted, degraded } = await runCase(server.port, caseName);
    rows.push({
      variant: 'one policy',
      case: caseName,
      calls: PROCESSES * CALLS,
      limit: LIMIT,
      admitted,
      degraded,
    });
    progress(
      `atomicity: ${caseName}: ${admitted} admitted${degraded ? `, ${degraded} decided without Redis` : ''}`,
    );
  }
  for (const caseName of SMOKE ? [wide[0]] : wide) {
    await admin.flushall();
    const { admitted, degraded } = await runCase(server.port, `wide:${caseName}`);
    const wideCount = await buildCase(admin, `wide:${caseName}`).wideCount();
    rows.push({
      variant: 'two policies',
      case: caseName,
      calls: PROCESSES * CALLS,
      limit: LIMIT,
      wideLimit: WIDE_LIMIT,
      admitted,
      degraded,
      wideCharged: wideCount,
      burned: wideCount - admitted,
      order: CASES_WIDE[caseName].order,
    });
    progress(`atomicity: two policies, ${caseName}: ${admitted} admitted, ${wideCount - admitted} burned`);
  }
  const file = writeResults('atomicity', {
    settings: { processes: PROCESSES, callsPerProcess: CALLS, limit: LIMIT, wideLimit: WIDE_LIMIT },
    redisVersion: server.version,
    durationMs: Date.now() - started,
    rows,
  });
  progress(`atomicity: wrote ${file}`);
} finally {
  admin.disconnect();
  await server.stop();
}

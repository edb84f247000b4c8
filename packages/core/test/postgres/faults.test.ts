import { createLimiter, type Decision, type Limiter, type OnStoreError, PostgresStore } from '@sluice/core';
import type pg from 'pg';
import { describePostgres, type ServerProcess, startPostgres } from '../../../../test/support/postgres.js';
import { expectOnlyWarnings } from '../../../../test/support/warnings.js';
import { watchUnhandledRejections } from '../failure/promises.js';
import { closeClients, makeClient, type PgClientName } from './clients.js';

// A failing store is warned about once when it fails and once when it is back: captured, nothing else.
expectOnlyWarnings('ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_RECOVERED');

/**
 * A PostgreSQL server of this suite's own, killed (SIGKILL to every process) while calls are in flight
 * and stalled (SIGSTOP: connections open, nothing answers) past storeTimeout: every call settles within
 * storeTimeout plus a margin as onStoreError says, nothing crashes or is left unhandled, the pool gets
 * its connections back, calls a stall held are given back once the server runs them, and decisions
 * come from the database again once it is back.
 */
// Longer than the Redis suite's: a PostgreSQL statement shares two busy cores with the other test worker.
const STORE_TIMEOUT_MS = 500;
/** A correctness bound (no call waits for a dead store), not a speed measure. */
const BOUND_MS = STORE_TIMEOUT_MS + 300;
const POOL = 4;

const unhandled = watchUnhandledRejections();
afterEach(() => {
  expect(unhandled).toEqual([]);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Call {
  readonly ms: number;
  readonly decision: Decision;
}

/** Waves of 8 concurrent calls (more than the pool holds), a subject each, for `forMs`. */
async function traffic(limiter: Limiter, label: string, forMs: number): Promise<Call[]> {
  const calls: Call[] = [];
  const until = performance.now() + forMs;
  for (let n = 0; performance.now() < until; ) {
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const start = performance.now();
        const decision = await limiter.consume(`${label}-${n++ % 16}`);
        calls.push({ ms: performance.now() - start, decision });
      }),
    );
    await sleep(10);
  }
  return calls;
}

/**
 * Waves until one is decided by the database again, every call of it: a new connection's first call
 * (connecting, compiling the functions) may take longer than storeTimeout on a busy machine.
 */
async function untilBack(limiter: Limiter): Promise<void> {
  const giveUp = performance.now() + 15_000;
  while (performance.now() < giveUp) {
    if ((await traffic(limiter, 'back', 1)).every((c) => c.decision.degraded === undefined)) return;
    await sleep(50);
  }
  throw new Error('decisions never came from PostgreSQL again');
}

function expectDegraded(mode: OnStoreError, calls: Call[]): void {
  const degraded = calls.filter((c) => c.decision.degraded);
  expect(degraded.length).toBeGreaterThan(8);
  for (const { decision } of degraded) {
    if (mode === 'deny') expect([decision.allowed, decision.reason]).toEqual([false, 'store-error']);
    else if (mode === 'allow') expect(decision.allowed).toBe(true);
    else expect(decision.allowed || decision.reason === 'limit').toBe(true);
  }
}

const runs: Array<[PgClientName, OnStoreError]> = [
  ['pg Pool', 'local'],
  ['postgres.js', 'deny'],
];

describe.each(runs)('PostgresStore faults on %s', (clientName, mode) =>
  describePostgres(`onStoreError '${mode}'`, () => {
    let server: ServerProcess;
    let client: Awaited<ReturnType<typeof makeClient>>;

    beforeAll(async () => {
      server = await startPostgres();
      client = await makeClient(clientName, server.url, { max: POOL });
      // The schema is created on first use, and each new connection compiles the functions on its first
      // call: both may take longer than storeTimeout on a busy machine, so they are done before the tests.
      const warm = createLimiter({
        limit: 1,
        window: '1s',
        store: new PostgresStore({ client }),
        storeTimeout: '30s',
      });
      await warm.peek('x');
      await Promise.all(Array.from({ length: 2 * POOL }, (_, i) => warm.consume(`warm-${i}`)));
    }, 60_000);
    afterAll(async () => {
      await closeClients();
      await server?.stop();
    });

    const limiterOf = (name: string, onStoreError: OnStoreError = mode) =>
      createLimiter({
        name,
        limit: 3,
        window: '1h',
        algorithm: 'fixed-window',
        store: new PostgresStore({ client }),
        onStoreError,
        storeTimeout: STORE_TIMEOUT_MS,
      });

    /** A pg Pool holds no more than its size and leaves no one waiting. */
    function expectPoolSettled(): void {
      if (clientName !== 'pg Pool') return;
      const pool = client as pg.Pool;
      expect(pool.totalCount).toBeLessThanOrEqual(POOL);
      expect(pool.waitingCount).toBe(0);
    }

    test('killed while calls are in flight, then restarted', async () => {
      const limiter = limiterOf('kill');
      const before = await traffic(limiter, 'before', 200);
      expect(before.every((c) => c.decision.degraded === undefined)).toBe(true);

      const [during] = await Promise.all([
        traffic(limiter, 'down', 1500),
        sleep(50).then(() => server.kill()),
      ]);
      expect(Math.max(...during.map((c) => c.ms))).toBeLessThanOrEqual(BOUND_MS);
      expectDegraded(mode, during);

      await server.restart();
      await untilBack(limiter);
      const after = await traffic(limiter, 'after', 300);
      expect(after.every((c) => c.decision.degraded === undefined)).toBe(true);
      expectPoolSettled();
    }, 60_000);

    test('stalled past storeTimeout: bounded calls, the stalled charges given back, the pool whole again', async () => {
      const limiter = limiterOf('stall', 'allow');
      await traffic(limiter, 'warm', 100);
      server.pause();
      let stalled: Call[];
      try {
        // Two calls for one subject that the server will run only when it resumes.
        const late = await Promise.all([limiter.consume('late'), limiter.consume('late')]);
        expect(late.map((d) => [d.allowed, d.degraded])).toEqual([
          [true, true],
          [true, true],
        ]);
        stalled = await traffic(limiter, 'stalled', 1000);
      } finally {
        server.resume();
      }
      expect(Math.max(...stalled.map((c) => c.ms))).toBeLessThanOrEqual(BOUND_MS);
      expectDegraded('allow', stalled);

      await untilBack(limiter);
      // What the server charged for the stalled calls when it ran them is given back: 'late' is whole.
      let seen = await limiter.peek('late');
      for (let i = 0; i < 50 && seen.remaining !== 3; i++) {
        await sleep(100);
        seen = await limiter.peek('late');
      }
      expect([seen.degraded, seen.remaining]).toEqual([undefined, 3]);
      expectPoolSettled();
    }, 60_000);
  }),
);

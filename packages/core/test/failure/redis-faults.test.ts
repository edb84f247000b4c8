import { monitorEventLoopDelay } from 'node:perf_hooks';
import {
  createLimiter,
  type Decision,
  type Limiter,
  type OnStoreError,
  type RedisClient,
  RedisStore,
} from '@sluice/core';
import Redis from 'ioredis';
import { describeRedis, type RedisProcess, startRedis } from '../../../../test/support/redis.js';
import { expectOnlyWarnings } from '../../../../test/support/warnings.js';
import { type ClientName, closeClients, configuredClient } from '../redis/clients.js';
import { watchUnhandledRejections } from './promises.js';

// A failing store is warned about once when it fails and once when it is back: captured, nothing else.
const warnings = expectOnlyWarnings('ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_RECOVERED');

/**
 * A real redis-server of this suite's own, stopped (SIGKILL) mid-run, paused with CLIENT PAUSE past
 * storeTimeout, and brought back: every call settles within storeTimeout plus a margin, each
 * onStoreError mode answers as the contract says, and decisions come from Redis again once it is back.
 * On every client: ioredis with each mode, the others with one mode each (the modes are the limiter's,
 * the same whichever client; what a client does with a dead or paused server is its own).
 */
const STORE_TIMEOUT_MS = 250;
/** A correctness bound (no call waits for a dead store), not a speed measure: generous for a busy CI box. */
const BOUND_MS = STORE_TIMEOUT_MS + 150;
/**
 * How late this process's event loop ran since the last traffic began: a process the machine did not
 * schedule cannot settle a call on time, whatever the store (537 ms once in CI, with Valkey and two
 * Jest workers on two cores). The bound is the store's; the process's own lateness is added to it.
 */
const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();
const bound = () => BOUND_MS + lag.max / 1e6;
/** Calls fired together in each wave of traffic. */
const WAVE = 8;

const unhandled = watchUnhandledRejections();
afterEach(() => {
  expect(unhandled).toEqual([]);
});

interface Call {
  readonly ms: number;
  readonly decision: Decision;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waves of WAVE concurrent calls, each for a subject of its own (`${label}-n`), for `forMs`. */
async function traffic(limiter: Limiter, label: string, forMs: number, fresh = true): Promise<Call[]> {
  if (fresh) lag.reset();
  const calls: Call[] = [];
  const until = performance.now() + forMs;
  let n = 0;
  while (performance.now() < until) {
    const wave = Array.from({ length: WAVE }, async () => {
      const start = performance.now();
      const decision = await limiter.consume(`${label}-${n++ % 24}`);
      calls.push({ ms: performance.now() - start, decision });
    });
    await Promise.all(wave);
    await sleep(10);
  }
  return calls;
}

/** Fires waves until one decision comes from Redis (not degraded); then the calls of that wave. */
async function untilRedisDecides(limiter: Limiter, label: string): Promise<Call[]> {
  const calls: Call[] = [];
  const giveUp = performance.now() + 10_000;
  lag.reset();
  while (performance.now() < giveUp) {
    const wave = await traffic(limiter, label, 1, false);
    calls.push(...wave);
    if (wave.some((c) => !c.decision.degraded)) return calls;
    await sleep(40);
  }
  throw new Error('decisions never came from Redis again');
}

function slowest(calls: Call[]): number {
  return Math.max(...calls.map((c) => c.ms));
}

/** What every degraded decision of a mode looks like (limit 3 per subject, per 10 s). */
function expectMode(mode: OnStoreError, calls: Call[]): void {
  expect(calls.length).toBeGreaterThan(WAVE);
  expect(calls.every((c) => c.decision.degraded === true)).toBe(true);
  const decisions = calls.map((c) => c.decision);
  if (mode === 'allow') {
    expect(decisions.every((d) => d.allowed && d.retryAfterMs === 0)).toBe(true);
  } else if (mode === 'deny') {
    expect(decisions.every((d) => !d.allowed && d.reason === 'store-error' && d.retryAfterMs === 1000)).toBe(
      true,
    );
  } else {
    // In-process counters: each subject gets its 3, then the local limit denies it.
    expect(decisions.some((d) => d.allowed)).toBe(true);
    expect(decisions.some((d) => !d.allowed && d.reason === 'limit' && d.retryAfterMs > 0)).toBe(true);
    expect(decisions.every((d) => d.allowed || d.reason === 'limit')).toBe(true);
  }
}

const runs: Array<[ClientName, OnStoreError[]]> = [
  ['ioredis', ['local', 'allow', 'deny']],
  ['iovalkey', ['local']],
  ['node-redis v4', ['allow']],
  ['node-redis v5', ['deny']],
  ['ioredis v6', ['allow']],
  ['node-redis v6', ['local']],
  // Through the stand-in (scripts/upstash-rest.cjs), whose own connection to Redis queues while
  // Redis is away, as Upstash's service would hold a request: storeTimeout is what bounds the call.
  ['@upstash/redis', ['deny']],
];

describe.each(runs)('RedisStore faults on %s (a redis-server of its own)', (clientName, modes) =>
  describeRedis(clientName, () => {
    let server: RedisProcess;
    let admin: Redis;

    beforeAll(async () => {
      server = await startRedis();
      // The admin connection queues its commands while Redis is away, unlike the limiters' clients.
      admin = new Redis(server.port, '127.0.0.1', { lazyConnect: true });
      admin.on('error', () => {});
      await admin.connect();
    });

    afterAll(async () => {
      admin.disconnect();
      await closeClients();
      await server.stop();
    });

    async function limiterFor(
      mode: OnStoreError,
      name: string,
      settings: 'fail-fast' | 'defaults' = 'fail-fast',
    ): Promise<Limiter> {
      const redis: RedisClient = await configuredClient(clientName, server.url, settings);
      const limiter = createLimiter({
        name,
        limit: 3,
        window: '10s',
        algorithm: 'fixed-window',
        store: new RedisStore({ client: redis }),
        onStoreError: mode,
        storeTimeout: STORE_TIMEOUT_MS,
      });
      // A new client's first calls also connect and load the script, which on a loaded machine alone
      // outlasted storeTimeout. Steady first.
      await untilRedisDecides(limiter, `${name}-warm-up`);
      return limiter;
    }

    /** Scripts the server has run since it (re)started. */
    async function scriptCalls(): Promise<number> {
      const stats = await admin.info('commandstats');
      let total = 0;
      for (const [, calls] of stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)) total += Number(calls);
      return total;
    }

    /**
     * Traffic while Redis is up: Redis decides, and the server ran scripts for it. (Counting
     * keys instead flaked: fixed windows are aligned, so every key can expire at a window boundary while
     * the deny cache answers the last waves.)
     */
    async function expectRedisDecided(limiter: Limiter, label: string, forMs: number): Promise<void> {
      const before = await scriptCalls();
      const calls = await traffic(limiter, label, forMs);
      // Redis answered every call in time, or the call waited out storeTimeout: with the machine at load
      // average 15 a healthy call was stalled that long. A call degraded sooner would be an error.
      expect(calls.filter((c) => c.decision.degraded !== undefined && c.ms < STORE_TIMEOUT_MS - 5)).toEqual(
        [],
      );
      expect(calls.filter((c) => c.decision.degraded === undefined).length).toBeGreaterThan(calls.length / 2);
      expect(slowest(calls)).toBeLessThanOrEqual(bound());
      expect(await scriptCalls()).toBeGreaterThan(before);
    }

    test("a client on its library's defaults (an offline queue) is bounded by storeTimeout too", async () => {
      const limiter = await limiterFor('deny', 'defaults', 'defaults');
      await expectRedisDecided(limiter, 'before', 200);
      await server.kill();
      const down = await traffic(limiter, 'down', 1200);
      expect(slowest(down)).toBeLessThanOrEqual(bound());
      expectMode('deny', down);
      // Queued in ioredis and iovalkey, the first calls waited for the timeout: it is storeTimeout that
      // bounds them. node-redis fails the queued commands when the socket drops, and the Upstash
      // stand-in answers an error for a command its connection had sent.
      if (clientName.startsWith('ioredis') || clientName === 'iovalkey')
        expect(down[0]!.ms).toBeGreaterThanOrEqual(STORE_TIMEOUT_MS - 5);
      await server.restart();
      await untilRedisDecides(limiter, 'back');
      await expectRedisDecided(limiter, 'after', 300);
    });

    describe.each(modes)("onStoreError '%s'", (mode) => {
      test('Redis killed mid-run, then restarted', async () => {
        const name = `kill-${mode}`;
        const limiter = await limiterFor(mode, name);
        await expectRedisDecided(limiter, 'before', 200);

        // Killed while calls are in flight.
        const [during] = await Promise.all([
          traffic(limiter, 'down', 1500),
          sleep(50).then(() => server.kill()),
        ]);
        expect(slowest(during)).toBeLessThanOrEqual(bound());
        const down = during.filter((c) => c.decision.degraded);
        expectMode(mode, down);
        // Once the circuit is open, no call waits for the dead server at all.
        expect(during.slice(-WAVE).every((c) => c.decision.degraded && c.ms < STORE_TIMEOUT_MS)).toBe(true);

        await server.restart();
        const back = await untilRedisDecides(limiter, 'back');
        expect(slowest(back)).toBeLessThanOrEqual(bound());
        await expectRedisDecided(limiter, 'after', 300);
        // The outage was said when it began and when it ended.
        expect(warnings.codes[0]).toBe('ERR_SLUICE_STORE_DEGRADED');
        expect(warnings.codes.at(-1)).toBe('ERR_SLUICE_STORE_RECOVERED');
      });

      test('Redis paused (CLIENT PAUSE) past storeTimeout', async () => {
        const name = `pause-${mode}`;
        const limiter = await limiterFor(mode, name);
        await expectRedisDecided(limiter, 'before', 200);

        await admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
        const paused = await traffic(limiter, 'paused', 1200);
        expect(slowest(paused)).toBeLessThanOrEqual(bound());
        expectMode(mode, paused);
        // The first calls waited for the timeout; it is the pause, not an error, that they report.
        expect(paused[0]!.ms).toBeGreaterThanOrEqual(STORE_TIMEOUT_MS - 5);

        const back = await untilRedisDecides(limiter, 'back');
        expect(slowest(back)).toBeLessThanOrEqual(bound());
        await expectRedisDecided(limiter, 'after', 300);
      });
    });
  }),
);

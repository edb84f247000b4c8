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
import { type ClientName, closeClients, configuredClient } from '../redis/clients.js';
import { watchUnhandledRejections } from './promises.js';

/**
 * The Sluice warnings of the whole file, by limiter: a failing store is warned about once when it fails
 * and once when it is back, and nothing else. Captured from the file's start, as its tests run at once.
 */
const OUTAGE_CODES = ['ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_RECOVERED'];
const seen: Array<{ code: string; message: string }> = [];
const emitWarning = process.emitWarning;
process.emitWarning = ((message: string, o?: { code?: string }) => {
  if (o?.code?.startsWith('ERR_SLUICE_')) seen.push({ code: o.code, message: String(message) });
}) as typeof process.emitWarning;
afterAll(() => {
  process.emitWarning = emitWarning;
  expect(seen.filter((w) => !OUTAGE_CODES.includes(w.code))).toEqual([]);
});
/** The codes warned of a limiter, in order. */
const warnedOf = (name: string) => seen.filter((w) => w.message.includes(`"${name}"`)).map((w) => w.code);

/**
 * A real redis-server of this suite's own, stopped (SIGKILL) mid-run, stalled (SIGSTOP) past
 * storeTimeout, and brought back: every call settles within storeTimeout plus a margin, each
 * onStoreError mode answers as the contract says, and decisions come from Redis again once it is back.
 * On every client: ioredis with each mode, the others with one mode each (the modes are the limiter's,
 * the same whichever client; what a client does with a dead or paused server is its own).
 */
const STORE_TIMEOUT_MS = 250;
/** A correctness bound (no call waits for a dead store), not a speed measure: generous for a busy CI box. */
const BOUND_MS = STORE_TIMEOUT_MS + 150;
/** Calls fired together in each wave of traffic. */
const WAVE = 8;
/**
 * Tests run this many at once, each on a redis-server of its own: they mostly wait (for a timeout, a
 * pause, a restart), and one after another they kept a Jest worker idle for a minute.
 */
const AT_ONCE = 2;

const unhandled = watchUnhandledRejections();
afterEach(() => {
  expect(unhandled).toEqual([]);
});

interface Call {
  readonly ms: number;
  readonly decision: Decision;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls, and how late this process's event loop ran while they were made. */
type Calls = Call[] & { readonly lateMs: number };

/**
 * Watches how late this process's event loop runs from now until `stop()`: a process the machine did
 * not schedule cannot settle a call on time, whatever the store (537 ms once in CI, with Valkey and two
 * Jest workers on two cores). A bound is the store's; the process's own lateness is added to it.
 */
function lateness(): { stop(): number } {
  const tickMs = 10;
  let latest = 0;
  let last = performance.now();
  const late = () => {
    const now = performance.now();
    latest = Math.max(latest, now - last - tickMs);
    last = now;
  };
  const timer = setInterval(late, tickMs);
  return {
    stop() {
      clearInterval(timer);
      late();
      return latest;
    },
  };
}

/** Waves of WAVE concurrent calls, each for a subject of its own (`${label}-n`), for `forMs`. */
async function traffic(limiter: Limiter, label: string, forMs: number): Promise<Calls> {
  const late = lateness();
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
  return Object.assign(calls, { lateMs: late.stop() });
}

/** Fires waves until one decision comes from Redis (not degraded); then the calls of that wave. */
async function untilRedisDecides(limiter: Limiter, label: string): Promise<Calls> {
  const late = lateness();
  const calls: Call[] = [];
  const giveUp = performance.now() + 10_000;
  while (performance.now() < giveUp) {
    const wave = await traffic(limiter, label, 1);
    calls.push(...wave);
    if (wave.some((c) => !c.decision.degraded)) return Object.assign(calls, { lateMs: late.stop() });
    await sleep(40);
  }
  late.stop();
  throw new Error('decisions never came from Redis again');
}

/**
 * The longest a call of `calls` may take: the store's bound, and the process's own lateness twice (the
 * call's timeout can fire that late, and so can the turn that sees it settle).
 */
const bound = (calls: Calls) => BOUND_MS + 2 * calls.lateMs;

/** Runs `work` when fewer than AT_ONCE tests are running theirs. */
let running = 0;
const waiting: Array<() => void> = [];
async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (running < AT_ONCE) running++;
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await work();
  } finally {
    // The slot passes to the next test waiting, or frees.
    const next = waiting.shift();
    if (next === undefined) running--;
    else next();
  }
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

// Each test has a redis-server of its own and runs beside others (inTurn): a server stopped or paused
// by one test is no other test's.
jest.setTimeout(60_000);
afterAll(closeClients);

interface Fault {
  readonly server: RedisProcess;
  limiterFor(mode: OnStoreError, name: string, settings?: 'fail-fast' | 'defaults'): Promise<Limiter>;
  expectRedisDecided(limiter: Limiter, label: string, forMs: number): Promise<void>;
}

/**
 * `scenario` for `clientName` on a redis-server of its own, with an admin connection that queues while
 * it is away; the scenario's clients are dropped before the server stops (a client's QUIT to a server
 * that is gone would wait for it).
 */
const onOwnServer = (clientName: ClientName, scenario: (fault: Fault) => Promise<void>) => () =>
  inTurn(async () => {
    const server = await startRedis();
    const admin = new Redis(server.port, '127.0.0.1', { lazyConnect: true });
    admin.on('error', () => {});
    const clients: RedisClient[] = [];
    try {
      await admin.connect();
      await scenario(faultOn(clientName, server, admin, clients));
    } finally {
      admin.disconnect();
      for (const client of clients) drop(client);
      await server.stop();
    }
  });

/** Ends a client at once, whichever library it is from (node-redis 5 and 6: destroy; the others: disconnect). */
function drop(client: RedisClient): void {
  const c = client as { destroy?: () => unknown; disconnect?: () => unknown };
  const ended = c.destroy !== undefined ? c.destroy() : c.disconnect?.();
  if (ended instanceof Promise) ended.catch(() => {});
}

function faultOn(clientName: ClientName, server: RedisProcess, admin: Redis, clients: RedisClient[]): Fault {
  /** Scripts the server has run since it (re)started. */
  async function scriptCalls(): Promise<number> {
    const stats = await admin.info('commandstats');
    let total = 0;
    for (const [, calls] of stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)) total += Number(calls);
    return total;
  }
  return {
    server,
    async limiterFor(mode, name, settings = 'fail-fast') {
      const redis: RedisClient = await configuredClient(clientName, server.url, settings);
      clients.push(redis);
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
    },
    /**
     * Traffic while Redis is up: Redis decides, and the server ran scripts for it. (Counting keys
     * instead flaked: fixed windows are aligned, so every key can expire at a window boundary while the
     * deny cache answers the last waves.)
     */
    async expectRedisDecided(limiter, label, forMs) {
      const before = await scriptCalls();
      const calls = await traffic(limiter, label, forMs);
      // Redis answered every call in time, or the call waited out storeTimeout: with the machine at load
      // average 15 a healthy call was stalled that long. A call degraded sooner would be an error.
      expect(calls.filter((c) => c.decision.degraded !== undefined && c.ms < STORE_TIMEOUT_MS - 5)).toEqual(
        [],
      );
      expect(calls.filter((c) => c.decision.degraded === undefined).length).toBeGreaterThan(calls.length / 2);
      expect(slowest(calls)).toBeLessThanOrEqual(bound(calls));
      expect(await scriptCalls()).toBeGreaterThan(before);
    },
  };
}

// Jest runs concurrent tests together only when they are siblings: one block holds every client's.
describeRedis('RedisStore faults, each test on a redis-server of its own', () => {
  for (const [clientName, modes] of runs) {
    /** A limiter name of this client's own: the file's warnings are told apart by it. */
    const nameOf = (what: string) => `${clientName.replace(/\W+/g, '-')}-${what}`;

    test.concurrent(
      `${clientName}: a client on its library's defaults (an offline queue) is bounded by storeTimeout too`,
      onOwnServer(clientName, async ({ server, limiterFor, expectRedisDecided }) => {
        const limiter = await limiterFor('deny', nameOf('defaults'), 'defaults');
        await expectRedisDecided(limiter, 'before', 200);
        await server.kill();
        const down = await traffic(limiter, 'down', 1200);
        expect(slowest(down)).toBeLessThanOrEqual(bound(down));
        expectMode('deny', down);
        // Queued in ioredis and iovalkey, the first calls waited for the timeout: it is storeTimeout that
        // bounds them. node-redis fails the queued commands when the socket drops, and the Upstash
        // stand-in answers an error for a command its connection had sent.
        if (clientName.startsWith('ioredis') || clientName === 'iovalkey')
          expect(down[0]!.ms).toBeGreaterThanOrEqual(STORE_TIMEOUT_MS - 5);
        await server.restart();
        await untilRedisDecides(limiter, 'back');
        await expectRedisDecided(limiter, 'after', 300);
      }),
    );

    for (const mode of modes) {
      test.concurrent(
        `${clientName}, onStoreError '${mode}': Redis killed mid-run, then restarted`,
        onOwnServer(clientName, async ({ server, limiterFor, expectRedisDecided }) => {
          const name = nameOf(`kill-${mode}`);
          const limiter = await limiterFor(mode, name);
          await expectRedisDecided(limiter, 'before', 200);

          // Killed while calls are in flight.
          const [during] = await Promise.all([
            traffic(limiter, 'down', 1500),
            sleep(50).then(() => server.kill()),
          ]);
          expect(slowest(during)).toBeLessThanOrEqual(bound(during));
          const down = during.filter((c) => c.decision.degraded);
          expectMode(mode, down);
          // Once the circuit is open, no call waits for the dead server at all.
          expect(during.slice(-WAVE).every((c) => c.decision.degraded && c.ms < STORE_TIMEOUT_MS)).toBe(true);

          await server.restart();
          const back = await untilRedisDecides(limiter, 'back');
          expect(slowest(back)).toBeLessThanOrEqual(bound(back));
          await expectRedisDecided(limiter, 'after', 300);
          // The outage was said when it began and when it ended.
          const warned = warnedOf(name);
          expect(warned[0]).toBe('ERR_SLUICE_STORE_DEGRADED');
          expect(warned.at(-1)).toBe('ERR_SLUICE_STORE_RECOVERED');
        }),
      );

      test.concurrent(
        `${clientName}, onStoreError '${mode}': Redis stalled (SIGSTOP) past storeTimeout`,
        onOwnServer(clientName, async ({ server, limiterFor, expectRedisDecided }) => {
          const limiter = await limiterFor(mode, nameOf(`pause-${mode}`));
          await expectRedisDecided(limiter, 'before', 200);

          // Stalled until the traffic is over (SIGSTOP), however late this process runs: a CLIENT PAUSE
          // of fixed length could end while a late call was still within its deadline.
          server.pause();
          const paused = await traffic(limiter, 'paused', 1200);
          server.resume();
          expect(slowest(paused)).toBeLessThanOrEqual(bound(paused));
          expectMode(mode, paused);
          // The first calls waited for the timeout; it is the pause, not an error, that they report.
          expect(paused[0]!.ms).toBeGreaterThanOrEqual(STORE_TIMEOUT_MS - 5);

          const back = await untilRedisDecides(limiter, 'back');
          expect(slowest(back)).toBeLessThanOrEqual(bound(back));
          await expectRedisDecided(limiter, 'after', 300);
        }),
      );
    }
  }
});

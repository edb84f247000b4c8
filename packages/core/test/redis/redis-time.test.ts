import { MemoryStore, RedisStore, type StoreCall } from '@sluice/core';
import type Redis from 'ioredis';
import { describeRedis, sharedRedis } from '../../../../test/support/redis.js';
import { planOf } from '../../src/stores/redis/keys.js';
import { closeClients, standaloneClient, uniquePrefix } from './clients.js';
import { reported, windowLimiter } from './store-calls.js';

/**
 * Under Redis TIME the window algorithms keep their state in one integer (the counts, and the window
 * index modulo 4 in the low two bits), which their Lua twins unpack by the time of the call. The parity suites run on a
 * caller's clock and so never see that form: here real time crosses window starts, bursts share a
 * batch, and each outcome must equal the memory store's at the instant Redis decided.
 */
const WINDOW_MS = 40;
const WINDOWS = 6;
const LIMIT = 5;

describeRedis('RedisStore under Redis TIME: states packed in one integer', () => {
  let client: Redis;

  beforeAll(async () => {
    client = standaloneClient(await sharedRedis());
  });

  afterAll(closeClients);

  type Limiter = ReturnType<typeof windowLimiter>;

  /**
   * Batches of `batch(limiter, round)` on Redis until real time has crossed WINDOWS window starts, each
   * outcome equal to the memory store's at the instant Redis decided; `after` sees each round's steps.
   */
  async function acrossWindows(
    limiter: Limiter,
    batch: (limiter: Limiter, round: number) => StoreCall[],
    after: (steps: ReturnType<typeof reported>[]) => Promise<void> | void,
  ): Promise<void> {
    const redis = new RedisStore({ client });
    let now = 0;
    const memory = new MemoryStore({ clock: () => now });
    const windows = new Set<number>();
    const deadline = Date.now() + 10_000;
    for (let round = 0; windows.size < WINDOWS && Date.now() < deadline; round++) {
      const calls = batch(limiter, round);
      const outcomes = await Promise.all(calls.map((c) => redis.consume(c)));
      const steps = [];
      for (let i = 0; i < calls.length; i++) {
        now = outcomes[i]!.now;
        steps.push(reported(memory.consume(calls[i]!).steps));
        expect(outcomes[i]!.steps).toEqual(steps[i]);
      }
      windows.add(Math.floor(now / WINDOW_MS));
      await after(steps);
    }
    expect(windows.size).toBe(WINDOWS);
  }

  test.each(['sliding-window', 'fixed-window'] as const)(
    '%s: decisions across window starts equal the memory store at the same instants',
    async (algorithm) => {
      const limiter = windowLimiter(algorithm, uniquePrefix('packed'), 'time', LIMIT, WINDOW_MS);
      const keys: Array<string | number> = [];
      planOf(limiter).keys('u', keys);
      const encodings = new Set<string>();
      // One to three calls in one batch (one script run, one Redis TIME), costs 1 and 2, peeks too.
      const mixed = (l: Limiter, round: number): StoreCall[] =>
        Array.from({ length: 1 + (round % 3) }, (_, i) => ({
          limiter: l,
          subject: 'u',
          cost: 1 + ((round + i) % 2),
          leaseId: 0,
          mode: (round + i) % 5 === 4 ? 'peek' : 'consume',
        }));
      await acrossWindows(limiter, mixed, async () => {
        const encoding = await client.object('ENCODING', keys[0] as string);
        if (encoding !== null) encodings.add(String(encoding));
      });
      expect([...encodings]).toEqual(['int']);
    },
  );

  // The script's commonest batch, every call a consume of cost 1 without a lease, is decided on the
  // integers the keys hold (the twins' stepInteger, step-integer.test.ts); one to four calls a batch,
  // a subject's key met again within it, denials included.
  test.each(['sliding-window', 'fixed-window'] as const)(
    '%s: batches of plain consumes equal the memory store at the same instants',
    async (algorithm) => {
      const limiter = windowLimiter(algorithm, uniquePrefix('plain'), 'time', LIMIT, WINDOW_MS);
      const seen = { allowed: 0, denied: 0 };
      const plain = (l: Limiter, round: number): StoreCall[] =>
        Array.from({ length: 1 + (round % 4) }, (_, i) => ({
          limiter: l,
          subject: (round + i) % 3 === 0 ? 'v' : 'u',
          cost: 1,
          leaseId: 0,
          mode: 'consume',
        }));
      await acrossWindows(limiter, plain, (steps) => {
        for (const s of steps) seen[s[0]!.allowed ? 'allowed' : 'denied']++;
      });
      expect(seen.allowed).toBeGreaterThan(0);
      expect(seen.denied).toBeGreaterThan(0);
    },
  );

  test.each(['sliding-window', 'fixed-window'] as const)(
    "%s: a subject new in its window holds one of Redis's shared integers (no object of its own)",
    async (algorithm) => {
      const limiter = windowLimiter(algorithm, uniquePrefix('shared'), 'time', 1000, 3_600_000);
      const redis = new RedisStore({ client });
      const keys: Array<string | number> = [];
      planOf(limiter).keys('u', keys);
      const call: StoreCall = { limiter, subject: 'u', cost: 7, leaseId: 0, mode: 'consume' };
      await redis.consume(call);
      await redis.consume(call);
      const value = Number(await client.get(keys[0] as string));
      // 14 counted, the window index modulo 4 in the low two bits.
      expect(Math.floor(value / 4)).toBe(14);
      // Redis marks its shared integers with the largest refcount; it shares none under an LRU or
      // LFU maxmemory policy (a REDIS_URL server may have one).
      const [, maxmemory] = (await client.config('GET', 'maxmemory')) as string[];
      const [, policy] = (await client.config('GET', 'maxmemory-policy')) as string[];
      const shares = maxmemory === '0' || !/lru|lfu/.test(policy!);
      expect(await client.object('REFCOUNT', keys[0] as string)).toBe(shares ? 2 ** 31 - 1 : 1);
    },
  );
});

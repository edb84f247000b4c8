import { RedisStore } from '@sluice/core';
import type Redis from 'ioredis';
import { describeRedis, sharedRedis } from '../../../../test/support/redis.js';
import { planOf } from '../../src/stores/redis/keys.js';
import { closeClients, standaloneClient, uniquePrefix } from './clients.js';
import { windowLimiter } from './store-calls.js';

/**
 * Under Redis TIME the script keeps a key's TTL (SET … KEEPTTL) while it lasts long enough and writes a
 * new one when a window starts. Either way the key must live until its state stops mattering, and not
 * a window longer. Driven across several window starts in real time (Redis's clock cannot be moved).
 */
const WINDOW_MS = 200;
const WINDOWS = 4;

describeRedis('RedisStore key lifetimes under Redis TIME', () => {
  let client: Redis;

  beforeAll(async () => {
    client = standaloneClient(await sharedRedis());
  });

  afterAll(closeClients);

  test.each(['sliding-window', 'fixed-window'] as const)(
    '%s: a key, its TTL kept or rewritten, lives until its state stops mattering',
    async (algorithm) => {
      const limiter = windowLimiter(algorithm, uniquePrefix('ttl'), 'ttl', 1_000_000, WINDOW_MS);
      const store = new RedisStore({ client });
      const keys: Array<string | number> = [];
      planOf(limiter).keys('u', keys);
      const key = keys[0] as string;
      const windows = new Set<number>();
      const deadline = Date.now() + 10_000;
      while (windows.size < WINDOWS && Date.now() < deadline) {
        const { now, steps } = await store.consume({
          limiter,
          subject: 'u',
          cost: 1,
          leaseId: 0,
          mode: 'consume',
        });
        // The state's expiresAt, from the step's resetMs (the end of the current window).
        const mattersUntil = now + steps[0]!.resetMs + (algorithm === 'sliding-window' ? WINDOW_MS : 0);
        // PTTL, then TIME right after it: their sum is at or after the key's expiry.
        const [[, ttl], [, time]] = (await client.multi().pttl(key).time().exec()) as [
          [null, number],
          [null, [string, string]],
        ];
        const redisNow = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
        expect(ttl).not.toBe(-1); // a key without a TTL
        if (ttl === -2) {
          // Gone: only once its state no longer matters (the end of a window may come between calls).
          expect(redisNow).toBeGreaterThanOrEqual(mattersUntil);
        } else {
          expect(redisNow + ttl).toBeGreaterThanOrEqual(mattersUntil);
          expect(redisNow + ttl).toBeLessThan(mattersUntil + WINDOW_MS);
        }
        windows.add(Math.floor(now / WINDOW_MS));
      }
      expect(windows.size).toBe(WINDOWS);
    },
  );
});

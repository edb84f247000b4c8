/**
 * Sluice and the peers on one ioredis client, each reduced to what the Redis suites ask of it:
 * `call(subject)` resolves to whether the call was admitted, and `count(subject)` (peers) reads how
 * much the subject has used, as each library counts.
 */
import { createRequire } from 'node:module';
import * as core from '@sluice/core';
import { RedisStore as RateLimitRedisStore } from 'rate-limit-redis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { takesLease } from './policies.mjs';

const require = createRequire(import.meta.url);
// Not in the package's exports (it has none): the store the plugin uses when given `redis`.
const FastifyRedisStore = require('@fastify/rate-limit/store/RedisStore.js');

/** Whether the built @sluice/core has its Redis store yet. */
export const hasSluiceRedisStore = typeof core.RedisStore === 'function';

/**
 * A Sluice limiter on Redis. `release`: a concurrency lease is given back as soon as it is granted
 * (a second round trip), so a benchmark measures take-and-give-back. `degraded()` counts decisions
 * taken without Redis (a store slower than storeTimeout, 250 ms by default): those are not atomic.
 */
export function sluiceOnRedis(client, { name, policies, release = true, storeTimeout }) {
  const store = new core.RedisStore({ client });
  const limiter = core.createLimiter({ name, policies, store, ...(storeTimeout ? { storeTimeout } : {}) });
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

/** rate-limiter-flexible: consume resolves when allowed and rejects with a RateLimiterRes when not. */
export function rateLimiterFlexible(client, { limit, windowMs, prefix }) {
  const limiter = new RateLimiterRedis({
    storeClient: client,
    points: limit,
    duration: windowMs / 1000,
    keyPrefix: prefix,
  });
  return {
    limiter,
    call: (subject) =>
      limiter.consume(subject).then(
        () => true,
        (refusal) => {
          if (refusal instanceof RateLimiterRes) return false;
          throw refusal;
        },
      ),
    count: async (subject) => (await limiter.get(subject))?.consumedPoints ?? 0,
  };
}

/** rate-limit-redis, the store express-rate-limit uses: admitted while totalHits <= limit. */
export function rateLimitRedis(client, { limit, windowMs, prefix }) {
  const store = new RateLimitRedisStore({ sendCommand: (...args) => client.call(...args), prefix });
  store.init({ windowMs });
  return {
    call: async (subject) => (await store.increment(subject)).totalHits <= limit,
    count: async (subject) => (await store.get(subject))?.totalHits ?? 0,
  };
}

/** @fastify/rate-limit's Redis store: admitted while current <= max (its onRequest hook's rule). */
export function fastifyRedis(client, { limit, windowMs, prefix }) {
  const store = new FastifyRedisStore(false, false, client, prefix);
  return {
    call: (subject) =>
      new Promise((resolve, reject) =>
        store.incr(
          subject,
          (error, r) => (error ? reject(error) : resolve(r.current <= limit)),
          windowMs,
          limit,
        ),
      ),
    count: async (subject) => Number((await client.get(prefix + subject)) ?? 0),
  };
}

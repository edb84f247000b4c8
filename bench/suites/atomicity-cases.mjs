/**
 * The limiters of the atomicity suite, built the same way in the workers (which call them) and in
 * the parent (which reads the wide policy's count once every worker is done).
 */
import { RateLimiterRedis, RateLimiterUnion } from 'rate-limiter-flexible';
import { fastifyRedis, rateLimiterFlexible, rateLimitRedis, sluiceOnRedis } from '../lib/redis-limiters.mjs';

export const SUBJECT = 'one-subject';
export const LIMIT = 1000;
export const WIDE_LIMIT = 100_000;
const WINDOW_MS = 3_600_000;
const strict = { limit: LIMIT, windowMs: WINDOW_MS };
/**
 * 2,000 calls at once on a busy 2-core machine can take longer than the default 250 ms; a late call
 * is decided in process (onStoreError 'local'), which would measure the fallback, not the store.
 */
const STORE_TIMEOUT = '10s';
const wide = { limit: WIDE_LIMIT, windowMs: WINDOW_MS };

/** Peers have no multi-policy call: two limiters in a row, the app-wide one first, as usually mounted. */
function inSeries(first, second) {
  return async (subject) => (await first.call(subject)) && second.call(subject);
}

/** Two-policy cases: `call` and `wideCount` (what the wide policy has charged the subject). */
export const CASES_WIDE = {
  sluice: {
    order: 'one call, all-or-nothing',
    build(client) {
      const { limiter, call } = sluiceOnRedis(client, {
        name: 'atomicity-two',
        storeTimeout: STORE_TIMEOUT,
        policies: [
          { name: 'strict', limit: LIMIT, window: WINDOW_MS },
          { name: 'wide', limit: WIDE_LIMIT, window: WINDOW_MS },
        ],
      });
      const wideCount = async () =>
        WIDE_LIMIT - (await limiter.peek(SUBJECT)).policies.find((p) => p.name === 'wide').remaining;
      return { call, wideCount };
    },
  },
  'rate-limiter-flexible': {
    order: 'RateLimiterUnion (consumes every limiter)',
    build(client) {
      const strictLimiter = new RateLimiterRedis({
        storeClient: client,
        points: LIMIT,
        duration: 3600,
        keyPrefix: 'u-strict',
      });
      const wideLimiter = rateLimiterFlexible(client, { ...wide, prefix: 'u-wide' });
      const union = new RateLimiterUnion(strictLimiter, wideLimiter.limiter);
      return {
        call: (subject) =>
          union.consume(subject).then(
            () => true,
            (refusal) => {
              if (refusal instanceof Error) throw refusal;
              return false;
            },
          ),
        wideCount: () => wideLimiter.count(SUBJECT),
      };
    },
  },
  'rate-limit-redis': {
    order: 'wide middleware, then strict',
    build(client) {
      const w = rateLimitRedis(client, { ...wide, prefix: 'wide:' });
      return {
        call: inSeries(w, rateLimitRedis(client, { ...strict, prefix: 'strict:' })),
        wideCount: () => w.count(SUBJECT),
      };
    },
  },
  '@fastify/rate-limit': {
    order: 'outer plugin (wide), then inner (strict)',
    build(client) {
      const w = fastifyRedis(client, { ...wide, prefix: 'wide-' });
      return {
        call: inSeries(w, fastifyRedis(client, { ...strict, prefix: 'strict-' })),
        wideCount: () => w.count(SUBJECT),
      };
    },
  },
};

/** One case by name: `sluice:<algorithm>`, a peer's name, or `wide:<name>` for the two-policy variant. */
export function buildCase(client, name) {
  if (name.startsWith('wide:')) return CASES_WIDE[name.slice(5)].build(client);
  if (name.startsWith('sluice:')) {
    const algorithm = name.slice(7);
    // Leases are kept: a concurrency limit counts calls in flight, and all of them are.
    return sluiceOnRedis(client, {
      name: `atomicity-${algorithm}`,
      policies: [{ algorithm, limit: LIMIT, window: WINDOW_MS }],
      release: false,
      storeTimeout: STORE_TIMEOUT,
    });
  }
  if (name === 'rate-limiter-flexible') return rateLimiterFlexible(client, { ...strict, prefix: 'rlf' });
  if (name === 'rate-limit-redis') return rateLimitRedis(client, { ...strict, prefix: 'rlr:' });
  if (name === '@fastify/rate-limit') return fastifyRedis(client, { ...strict, prefix: 'frl-' });
  throw new Error(`unknown atomicity case ${name}`);
}

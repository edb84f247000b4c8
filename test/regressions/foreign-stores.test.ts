import {
  createHttpHandler,
  createLimiter,
  ErrorCodes,
  frameworkReader,
  SluiceConfigError,
} from '@sluice/core';

// A store of another library passed as `store` was refused with a generic message pointing to
// docs/stores.md, which npm users do not have (5fcb38f). The message now says what it is and what to
// pass instead. The stores are the libraries' own, as installed for the benchmarks (bench/package.json).
const bench = (name: string) => require(require.resolve(name, { paths: [`${__dirname}/../../bench`] }));

const { RedisStore: RateLimitRedisStore } = bench('rate-limit-redis');
const { MemoryStore: ExpressMemoryStore } = bench('express-rate-limit');
const { RateLimiterMemory, RateLimiterRedis } = bench('rate-limiter-flexible');
const FastifyLocalStore = bench('@fastify/rate-limit/store/LocalStore.js');

function storeError(store: unknown): SluiceConfigError {
  try {
    createLimiter({ limit: 5, window: '1m', store } as never);
  } catch (error) {
    if (error instanceof SluiceConfigError) return error;
    throw error;
  }
  throw new Error('accepted');
}

const sluiceRedis = 'store: new RedisStore({ client }) from @sluice/core, with your Redis client';

describe('a store of another library', () => {
  test.each([
    [
      "rate-limit-redis's RedisStore",
      () => new RateLimitRedisStore({ sendCommand: async () => 'sha' }),
      'a RedisStore from rate-limit-redis',
    ],
    ["express-rate-limit's MemoryStore", () => new ExpressMemoryStore(), 'a store of express-rate-limit'],
    [
      'a RateLimiterMemory',
      () => new RateLimiterMemory({ points: 5, duration: 60 }),
      'rate-limiter-flexible',
    ],
    [
      'a RateLimiterRedis',
      () => new RateLimiterRedis({ storeClient: { on() {} }, points: 5, duration: 60 }),
      'rate-limiter-flexible',
    ],
    ["@fastify/rate-limit's store class", () => FastifyLocalStore, 'a store of @fastify/rate-limit'],
    ["@fastify/rate-limit's store instance", () => new FastifyLocalStore(), 'a store of @fastify/rate-limit'],
  ])('%s: says what it is and what to pass instead', (_, make, what) => {
    const error = storeError(make());
    expect(error).toMatchObject({ code: ErrorCodes.INVALID_STORE, option: 'store' });
    expect(error.message).toContain(what);
    expect(error.message).toContain(sluiceRedis);
    expect(error.message).not.toContain('docs/');
  });

  test('a rate-limiter-flexible limiter says its duration was seconds', () => {
    expect(storeError(new RateLimiterMemory({ points: 5, duration: 60 })).message).toContain(
      "duration, in SECONDS, as window: '60s'",
    );
  });

  test('anything else names the Store interface, with no docs link', () => {
    const { message } = storeError({ get() {} });
    expect(message).toContain('a MemoryStore, RedisStore or ClusterStore from @sluice/core');
    expect(message).not.toContain('docs/');
  });

  test('a rate-limiter-flexible limiter given as `limiter` says what it is', () => {
    expect(() =>
      createHttpHandler(
        { limiter: new RateLimiterMemory({ points: 5, duration: 60 }) } as never,
        frameworkReader,
      ),
    ).toThrow(/limiter: expected a limiter from createLimiter\(\); got a limiter of rate-limiter-flexible/);
  });
});

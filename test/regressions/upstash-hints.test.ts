import { createLimiter, ErrorCodes } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import { configError as errorOf } from '../support/config-error.js';

// Review 28: @upstash/ratelimit's options pasted into createLimiter or rateLimiter got weak or wrong
// hints: limiter: Ratelimit.slidingWindow(10, '10 s') was told "write `limit` instead" (it carries
// the algorithm, the limit and the window), timeout, ephemeralCache and analytics got none, and
// rateLimiter() refused a prefix beside the pasted limiter as a conflict. Each test failed before.

// What Ratelimit.slidingWindow(10, '10 s') returns: a closure, its numbers out of reach.
const slidingWindow = () => () => ({ limit: async () => ({ success: true }) });
const redis = { eval: async () => null, evalsha: async () => null, get: async () => null };
const pasted = {
  redis,
  limiter: slidingWindow(),
  prefix: '@upstash/ratelimit',
  analytics: true,
  ephemeralCache: new Map(),
  timeout: 1000,
};

describe('@upstash/ratelimit options in createLimiter', () => {
  const { message } = errorOf(() => createLimiter(pasted as never));

  test('limiter: write algorithm, limit and window, with each maker translated', () => {
    expect(message).toContain('limiter: unknown option; write `algorithm`, `limit` and `window` instead');
    expect(message).toContain(
      "Ratelimit.slidingWindow(10, '10 s') is algorithm: 'sliding-window', limit: 10, window: '10 s'",
    );
    expect(message).toContain("algorithm: 'token-bucket', limit: 5 (its refill rate)");
    expect(message).not.toContain('write `limit` instead');
  });

  test('a function named after its algorithm narrows the hint to it', () => {
    const tokenBucketLimiter = () => undefined;
    const error = errorOf(() =>
      createLimiter({ limit: 1, window: '1m', limiter: tokenBucketLimiter } as never),
    );
    expect(error.message).toContain("'token-bucket'");
    expect(error.message).not.toContain("'sliding-window'");
  });

  test('redis: store: new RedisStore({ client: redis })', () => {
    expect(message).toContain(
      'redis: unknown option; write `store` instead: store: new RedisStore({ client: redis })',
    );
  });

  test('timeout: storeTimeout, and the request then follows onStoreError', () => {
    expect(message).toContain('timeout: unknown option; write `storeTimeout` instead');
    expect(message).toMatch(/let the request through after its timeout; Sluice follows onStoreError/);
  });

  test("ephemeralCache: the deny cache's denyCacheMs", () => {
    expect(message).toContain('ephemeralCache: unknown option; write `denyCacheMs` instead: the deny cache');
  });

  test('analytics: @sluice/core/otel (createLimiter has no onDecision)', () => {
    expect(message).toContain('analytics: unknown option; createLimiter has no onDecision');
    expect(message).toContain('@sluice/core/otel');
  });

  test('prefix is taken as it is', () => {
    expect(message).not.toContain('prefix: unknown option');
  });
});

describe('@upstash/ratelimit options in rateLimiter', () => {
  test('analytics is onDecision there', () => {
    const error = errorOf(() => rateLimiter({ limit: 1, window: '1m', analytics: true } as never));
    expect(error.message).toContain('analytics: unknown option; write `onDecision` instead');
  });

  test('a pasted limiter is named for what it is, even beside a prefix', () => {
    const error = errorOf(() => rateLimiter({ limiter: slidingWindow(), prefix: 'rl' } as never));
    expect(error).toMatchObject({ code: ErrorCodes.INVALID_OPTION, option: 'limiter' });
    expect(error.message).toContain('got a function: write `algorithm`, `limit` and `window` instead');
  });
});

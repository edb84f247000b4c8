import { createLimiter, ErrorCodes, SluiceConfigError } from '@sluice/core';
import { rateLimiter } from '@sluice/express';

// Hints a newcomer pasting another library's options met (issue #28): blockDuration in createLimiter
// got none (its `ban` is the HTTP layer's); execEvenly's said requests are held, which
// createLimiter().consume() never does; rate-limit-redis's prefix was dropped from its store's hint;
// express-rate-limit's validate keys got no mapping. Each test failed before the fix.

function errorOf(make: () => unknown): SluiceConfigError {
  try {
    make();
  } catch (error) {
    if (error instanceof SluiceConfigError) return error;
    throw error;
  }
  throw new Error('no error');
}

describe('rate-limiter-flexible in createLimiter', () => {
  test('blockDuration says ban is the HTTP layer’s option, in seconds there', () => {
    const error = errorOf(() => createLimiter({ limit: 1, window: '1m', blockDuration: 60 } as never));
    expect(error).toMatchObject({ code: ErrorCodes.UNKNOWN_OPTION, option: 'blockDuration' });
    expect(error.message).toMatch(/blockDuration: unknown option; a ban is an option of the HTTP layer/);
    expect(error.message).toContain("ban: { after: 3, within: '1m', for: '15m' }");
    expect(error.message).toContain('blockDuration was seconds');
  });

  test('execEvenly: consume() holds nothing, it returns decision.delayMs', () => {
    const error = errorOf(() => createLimiter({ limit: 1, window: '1m', execEvenly: true } as never));
    expect(error.message).toContain("write `algorithm` instead: algorithm: 'leaky-bucket'");
    expect(error.message).toContain('limiter.consume() holds nothing: it returns decision.delayMs');
  });

  test('a leaky-bucket consume() indeed returns at once with the wait in delayMs', async () => {
    const limiter = createLimiter({ limit: 10, window: '10s', algorithm: 'leaky-bucket' });
    await limiter.consume('a');
    const started = Date.now();
    const second = await limiter.consume('a');
    expect(Date.now() - started).toBeLessThan(500);
    expect(second.delayMs).toBeGreaterThan(500);
  });
});

describe('express-rate-limit', () => {
  test("rate-limit-redis's store carries its prefix into the hint", () => {
    const store = { prefix: 'rl:', sendCommand: () => 1, increment: () => 1 };
    const error = errorOf(() => rateLimiter({ limit: 1, window: '1m', store } as never));
    expect(error).toMatchObject({ code: ErrorCodes.INVALID_STORE, option: 'store' });
    expect(error.message).toContain('prefix: "rl:"');
  });

  test.each([
    ['xForwardedForHeader', 'ERR_SLUICE_FORWARDED_IGNORED'],
    ['trustProxy', 'ERR_SLUICE_TRUST_PROXY_ALL'],
    ['singleCount', 'ERR_SLUICE_DOUBLE_COUNT'],
  ])('validate: { %s } names the Sluice check that does its job (%s)', (theirs, ours) => {
    const error = errorOf(() =>
      rateLimiter({ limit: 1, window: '1m', validate: { [theirs]: false } } as never),
    );
    expect(error).toMatchObject({ code: ErrorCodes.UNKNOWN_OPTION, option: `validate.${theirs}` });
    expect(error.message).toContain(`write validate: { ${ours}: false`);
  });

  test('the mapped check is taken as written', () => {
    expect(() =>
      rateLimiter({ limit: 1, window: '1m', validate: { ERR_SLUICE_FORWARDED_IGNORED: false } }),
    ).not.toThrow();
  });
});

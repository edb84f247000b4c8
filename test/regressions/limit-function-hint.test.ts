import { createLimiter, ErrorCodes } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import { configError as errorOf } from '../support/config-error.js';

// Review 28: express-rate-limit's `limit: (req) => …` pasted into @sluice/express's rateLimiter() was
// told plans are "an option of the HTTP layer (…), not of createLimiter": a user of the adapter never
// called createLimiter, and plans are an option of the very rateLimiter() called. Failed on ae2676c.
describe('a limit that is a function of the request', () => {
  test.each([
    ['options.limit', { limit: () => 5, window: '1m' }],
    ['policies[0].limit', { policies: [{ limit: () => 5, window: '1m' }] }],
    ['max', { max: () => 5, window: '1m' }],
  ])(
    "rateLimiter() of an adapter: %s is answered with plans in this rateLimiter()'s options",
    (option, options) => {
      const error = errorOf(() => rateLimiter(options as never));
      expect(error.option).toBe(option);
      expect(error.message).toContain(
        'limits that depend on the request are plans, given in these same options',
      );
      expect(error.message).toContain('rateLimiter()');
      expect(error.message).not.toContain('createLimiter');
    },
  );

  test('createLimiter: plans are the HTTP layer’s, not its own', () => {
    const error = errorOf(() => createLimiter({ limit: (() => 5) as never, window: '1m' }));
    expect(error).toMatchObject({ code: ErrorCodes.INVALID_LIMIT, option: 'options.limit' });
    expect(error.message).toContain('an option of the HTTP layer');
    expect(error.message).toContain('not of createLimiter');
  });
});

import { ErrorCodes, SluiceConfigError } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import { eachFramework } from '../adapters/frameworks.js';
import { serving } from '../adapters/support.js';

// A constant cost above every policy's capacity was accepted, then refused every request with no
// Retry-After (retryAfterMs Infinity). It is a configuration error now. Failed on 13f5928 (Express and
// Fastify then; every framework of the shared suite now).
describe.each(eachFramework)('%s: a constant cost above every capacity', (_name, framework) => {
  const start = serving(framework);

  it('is ERR_SLUICE_COST_EXCEEDS_CAPACITY when the app is set up, before any request', async () => {
    const made = start({ cost: 11, limit: 10, window: '1m' });
    await expect(made).rejects.toThrow(SluiceConfigError);
    await expect(made).rejects.toMatchObject({ code: ErrorCodes.COST_EXCEEDS_CAPACITY, option: 'cost' });
  });
});

describe('what counts as a capacity', () => {
  it('a bucket counts by its burst, and any policy that can hold the cost makes it valid', () => {
    expect(() =>
      rateLimiter({ cost: 15, limit: 10, window: '1m', algorithm: 'token-bucket', burst: 20 }),
    ).not.toThrow();
    expect(() =>
      rateLimiter({
        cost: 15,
        policies: [
          { name: 'a', limit: 10, window: '1m' },
          { name: 'b', limit: 20, window: '1h' },
        ],
      }),
    ).not.toThrow();
    expect(() => rateLimiter({ cost: 10, limit: 10, window: '1m' })).not.toThrow();
  });
});

import { ErrorCodes, SluiceConfigError } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import { frameworks } from '../../packages/fastify/test/frameworks.js';

// A constant cost above every policy's capacity was accepted, then refused every request with no
// Retry-After (retryAfterMs Infinity). It is a configuration error now. Failed on 13f5928.
describe('a constant cost above every capacity', () => {
  it('throws ERR_SLUICE_COST_EXCEEDS_CAPACITY when the middleware is made', () => {
    const make = () => rateLimiter({ cost: 11, limit: 10, window: '1m' });
    expect(make).toThrow(SluiceConfigError);
    expect(make).toThrow(expect.objectContaining({ code: ErrorCodes.COST_EXCEEDS_CAPACITY, option: 'cost' }));
  });

  it('counts a bucket by its burst, and any policy that can hold the cost makes it valid', () => {
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

  it('throws when the Fastify plugin is registered', async () => {
    const app = frameworks[0]![1]();
    await expect(app.register(sluice, { cost: 3, limit: 2, window: '1s' }).ready()).rejects.toMatchObject({
      code: ErrorCodes.COST_EXCEEDS_CAPACITY,
    });
    await app.close();
  });
});

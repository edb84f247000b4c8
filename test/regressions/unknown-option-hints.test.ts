import { createLimiter, ErrorCodes, SluiceConfigError } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import { frameworks } from '../../packages/fastify/test/frameworks.js';

// An express-rate-limit or @fastify/rate-limit configuration failed with "unknown option" and a
// list of 30 names. The error now says what to write instead (the other libraries' names, or the
// nearest option for a typo) and lists only the options valid where the mistake is. Failed on 13f5928.

function errorOf(make: () => unknown): SluiceConfigError {
  try {
    make();
  } catch (error) {
    if (error instanceof SluiceConfigError) return error;
    throw error;
  }
  throw new Error('no error');
}

describe('an unknown option', () => {
  it.each([
    ['windowMs', 'window'],
    ['timeWindow', 'window'],
    ['max', 'limit'],
    ['points', 'limit'],
    ['keyGenerator', 'subject'],
    ['message', 'handler'],
    ['errorResponseBuilder', 'handler'],
    ['standardHeaders', 'headers'],
    ['skipOnError', 'onStoreError'],
    ['passOnStoreError', 'onStoreError'],
    ['lmit', 'limit'],
    ['skipFailedRequest', 'skipFailedRequests'],
    // Names that no edit distance finds (hostile review D5).
    ['status', 'statusCode'],
    ['whitelist', 'allowList'],
    ['blacklist', 'denyList'],
    ['blockDuration', 'ban'],
    ['banDuration', 'ban'],
  ])('%s: says to write %s instead', (given, instead) => {
    const error = errorOf(() => rateLimiter({ limit: 1, window: '1m', [given]: 1 } as never));
    expect(error.code).toBe(ErrorCodes.UNKNOWN_OPTION);
    expect(error.option).toBe(given);
    expect(error.message).toContain(`write \`${instead}\` instead`);
  });

  it('trustProxy: says where trust proxy is set instead, Express and Fastify', async () => {
    const error = errorOf(() => rateLimiter({ limit: 1, window: '1m', trustProxy: 1 } as never));
    expect(error.code).toBe(ErrorCodes.UNKNOWN_OPTION);
    expect(error.option).toBe('trustProxy');
    expect(error.message).toContain("Express: app.set('trust proxy', …)");
    expect(error.message).toContain('Fastify({ trustProxy: … })');
    const app = frameworks[0]![1]();
    await expect(
      app.register(sluice, { limit: 1, window: '1m', trustProxy: true } as never).ready(),
    ).rejects.toThrow(/trustProxy: unknown option; Sluice limits the address the framework gives \(req\.ip/);
    await app.close();
  });

  it('a name meant for an HTTP option, in the core limiter, gets no HTTP hint', () => {
    const error = errorOf(() => createLimiter({ limit: 1, window: '1m', status: 429 } as never));
    expect(error.code).toBe(ErrorCodes.UNKNOWN_OPTION);
    expect(error.message).not.toContain('statusCode');
  });

  it('in a policy lists the policy options only', () => {
    const error = errorOf(() =>
      createLimiter({ policies: [{ limit: 1, window: '1m', algoritm: 'gcra' } as never] }),
    );
    expect(error.message).toContain('write `algorithm` instead');
    expect(error.message).toContain('limit, window, algorithm, name, burst, scope, delay');
    expect(error.message).not.toContain('onStoreError');
  });

  it('in the core limiter lists no HTTP option', () => {
    const error = errorOf(() => createLimiter({ limit: 1, window: '1m', subject: 'ip' } as never));
    expect(error.message).not.toContain('allowList');
  });

  it('on Fastify lists global and hook for the plugin, hook only for a route', async () => {
    const app = frameworks[0]![1]();
    await expect(app.register(sluice, { timeWindow: '1m', max: 5 } as never).ready()).rejects.toThrow(
      /write `window` instead; the options here are .*global, hook/,
    );
    await app.close();
    const routeApp = frameworks[0]![1]();
    await routeApp.register(sluice, { limit: 5, window: '1m' });
    const route = () => routeApp.get('/', { config: { rateLimit: { max: 1 } as never } }, async () => 'ok');
    const error = errorOf(route);
    expect(error.option).toBe('config.rateLimit.max');
    expect(error.message).toContain('write `limit` instead');
    expect(error.message).toMatch(/hook/);
    expect(error.message).not.toMatch(/global/);
    await routeApp.close();
  });
});

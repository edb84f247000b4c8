import { type RateLimiterOptions, rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import request from 'supertest';
import { expressVersions } from '../../packages/express/test/support.js';
import { frameworks } from '../../packages/fastify/test/frameworks.js';
import { recordWarnings } from '../support/warnings.js';
import { eachFramework } from './frameworks.js';
import { proxyWarnings } from './suites/warnings.js';

/**
 * The validation warnings (API.md r2, `validate`): each fires on the mistake it names, once, and stays
 * silent on a correct setup of each kind (behind one proxy, behind a list of proxies, direct).
 */

const { codes, messages } = recordWarnings();

const limit: RateLimiterOptions = { limit: 100, window: '1m' };
const fromProxy = { 'x-forwarded-for': '203.0.113.9' };

async function express(trust: unknown, options: RateLimiterOptions, headers: Record<string, string> = {}) {
  const app = expressVersions[0]![1]();
  if (trust !== undefined) app.set('trust proxy', trust);
  app.use(rateLimiter(options));
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  for (let i = 0; i < 3; i++) await request(app).get('/').set(headers);
}

async function fastify(
  trustProxy: unknown,
  options: RateLimiterOptions,
  headers: Record<string, string> = {},
  make = frameworks[0]![1],
) {
  const app = make(trustProxy === undefined ? {} : ({ trustProxy } as never));
  await app.register(sluice, options as never);
  app.get('/', async () => 'ok');
  for (let i = 0; i < 3; i++) await app.inject({ url: '/', headers, remoteAddress: '127.0.0.1' });
  await app.close();
}

describe('Express', () => {
  it('ERR_SLUICE_FORWARDED_IGNORED: a proxied request while no proxy is trusted, once', async () => {
    await express(undefined, limit, fromProxy);
    expect(codes).toEqual(['ERR_SLUICE_FORWARDED_IGNORED']);
  });

  it.each([
    ['behind one proxy', 1],
    ['behind a list of proxies', ['loopback', '10.0.0.0/8']],
    ['direct', undefined],
  ])('silent %s', async (kind, trust) => {
    await express(trust, limit, kind === 'direct' ? {} : fromProxy);
    expect(codes).toEqual([]);
  });

  it('ERR_SLUICE_TRUST_PROXY_ALL: trust proxy true', async () => {
    await express(true, limit, fromProxy);
    expect(codes).toEqual(['ERR_SLUICE_TRUST_PROXY_ALL']);
  });

  // 6cc09fa checked only the first app a middleware served, and marked an app checked even when that
  // limiter had the warning off: later limiters, and other apps, stayed silent.
  it('ERR_SLUICE_TRUST_PROXY_ALL for each app a middleware serves, and after a limiter that has it off', async () => {
    const shared = rateLimiter(limit);
    const apps = [false, true].map((trust) => {
      const app = expressVersions[0]![1]();
      app.set('trust proxy', trust);
      app.use(shared);
      app.get('/', (_req, res) => void res.send('ok'));
      return app;
    });
    for (const app of apps) await request(app).get('/');
    expect(codes).toEqual(['ERR_SLUICE_TRUST_PROXY_ALL']);
    codes.length = 0;
    const app = expressVersions[0]![1]();
    app.set('trust proxy', true);
    app.use(rateLimiter({ ...limit, validate: { ERR_SLUICE_TRUST_PROXY_ALL: false } }));
    app.use(rateLimiter({ ...limit, name: 'second' }));
    app.get('/', (_req, res) => void res.send('ok'));
    await request(app).get('/');
    expect(codes).toEqual(['ERR_SLUICE_TRUST_PROXY_ALL']);
  });

  // 6cc09fa emitted a warning with no code for every failed call: 2,000 requests, 2,000 lines.
  it('ERR_SLUICE_ON_DECISION_FAILED: an asynchronous onDecision that rejects, once per limiter', async () => {
    const onDecision = () => Promise.reject(new Error('metrics are down'));
    await express(undefined, { ...limit, onDecision });
    await express(undefined, { ...limit, onDecision });
    await new Promise((resolve) => setImmediate(resolve));
    expect(codes).toEqual(['ERR_SLUICE_ON_DECISION_FAILED', 'ERR_SLUICE_ON_DECISION_FAILED']);
    expect(messages[0]).toContain('metrics are down');
    codes.length = 0;
    await express(undefined, { ...limit, onDecision, validate: { ERR_SLUICE_ON_DECISION_FAILED: false } });
    await new Promise((resolve) => setImmediate(resolve));
    expect(codes).toEqual([]);
  });

  it('ERR_SLUICE_UNVERIFIED_CREDENTIAL at construction; silent with verify', () => {
    rateLimiter({ ...limit, subject: ['api-key', 'ip'] });
    expect(codes).toEqual(['ERR_SLUICE_UNVERIFIED_CREDENTIAL']);
    codes.length = 0;
    rateLimiter({ ...limit, subject: 'token', verify: (t) => t });
    expect(codes).toEqual([]);
  });

  it('ERR_SLUICE_DOUBLE_COUNT: one limiter applied twice; silent for two limiters', async () => {
    const app = expressVersions[0]![1]();
    const once = rateLimiter(limit);
    app.use(once);
    app.get('/', once, (_req, res) => {
      res.send('ok');
    });
    app.get('/two', rateLimiter({ ...limit, name: 'route' }), (_req, res) => {
      res.send('ok');
    });
    await request(app).get('/two');
    expect(codes).toEqual([]);
    await request(app).get('/');
    expect(codes).toEqual(['ERR_SLUICE_DOUBLE_COUNT']);
  });

  it('validate: false turns every check off, { code: false } one', async () => {
    await express(undefined, { ...limit, validate: false }, fromProxy);
    rateLimiter({ ...limit, subject: 'api-key', validate: { ERR_SLUICE_UNVERIFIED_CREDENTIAL: false } });
    expect(codes).toEqual([]);
    expect(() => rateLimiter({ ...limit, validate: { ERR_SLUICE_NOPE: false } as never })).toThrow(
      /unknown check/,
    );
  });
});

describe('Fastify', () => {
  it('ERR_SLUICE_FORWARDED_IGNORED: a proxied request while no proxy is trusted', async () => {
    await fastify(undefined, limit, fromProxy);
    expect(codes).toEqual(['ERR_SLUICE_FORWARDED_IGNORED']);
  });

  it.each([
    ['behind one proxy', '127.0.0.1'],
    ['behind a list of proxies', ['127.0.0.1', '10.0.0.0/8']],
    ['direct', undefined],
  ])('silent %s', async (kind, trust) => {
    await fastify(trust, limit, kind === 'direct' ? {} : fromProxy);
    expect(codes).toEqual([]);
  });

  it('ERR_SLUICE_TRUST_PROXY_ALL at registration', async () => {
    await fastify(true, limit);
    expect(codes).toEqual(['ERR_SLUICE_TRUST_PROXY_ALL']);
  });

  it('ERR_SLUICE_TRUST_PROXY_IGNORED: a hop count on Fastify 5.12.1 and later, which does not apply it; silent on Fastify 4', async () => {
    await fastify(1, limit, fromProxy);
    expect(codes).toContain('ERR_SLUICE_TRUST_PROXY_IGNORED');
    codes.length = 0;
    await fastify(1, limit, fromProxy, frameworks[1]![1]);
    expect(codes).toEqual([]);
  });

  it('ERR_SLUICE_UNVERIFIED_CREDENTIAL at registration', async () => {
    await fastify(undefined, { ...limit, subject: 'api-key' });
    expect(codes).toEqual(['ERR_SLUICE_UNVERIFIED_CREDENTIAL']);
  });

  it('ERR_SLUICE_UNVERIFIED_CREDENTIAL with global: false: for each route that limits, never for the defaults alone', async () => {
    const app = frameworks[0]![1]();
    await app.register(sluice, { global: false, subject: ['api-key', 'ip'] } as never);
    // Nothing limits yet: the defaults are only checked, by a stand-in that decides nothing.
    expect(codes).toEqual([]);
    app.get(
      '/export',
      { config: { rateLimit: { name: 'exports', limit: 2, window: '1m' } } },
      async () => 'ok',
    );
    expect(codes).toEqual(['ERR_SLUICE_UNVERIFIED_CREDENTIAL']);
    expect(messages.at(-1)).toContain('Limiter "exports"');
    await app.close();
  });

  it('global: false still checks the defaults at registration, validate included', async () => {
    for (const validate of [{ ERR_SLUICE_NOPE: false }, { ERR_SLUICE_UNVERIFIED_CREDENTIAL: 'no' }, 'no']) {
      const app = frameworks[0]![1]();
      await expect(
        app.register(sluice, { global: false, subject: 'api-key', validate } as never).ready(),
      ).rejects.toThrow(/^validate/);
      await app.close();
    }
    // validate: false and { code: false } are kept for the routes.
    const quiet = frameworks[0]![1]();
    await quiet.register(sluice, { global: false, subject: 'api-key', validate: false });
    quiet.get('/', { config: { rateLimit: { limit: 1, window: '1m' } } }, async () => 'ok');
    await quiet.close();
    expect(codes).toEqual([]);
  });

  it.each(frameworks)(
    'ERR_SLUICE_UNLIMITED_ROUTES on %s: routes declared before the plugin; silent after it',
    async (_n, make) => {
      const before = make();
      before.get('/early', async () => 'not limited');
      await before.register(sluice, { limit: 100, window: '1m' });
      before.get('/late', async () => 'limited');
      await before.ready();
      expect(codes).toEqual(['ERR_SLUICE_UNLIMITED_ROUTES']);
      expect(messages.at(-1)).toContain('/early');
      await before.close();
      codes.length = 0;
      const after = make();
      await after.register(sluice, { limit: 100, window: '1m' });
      after.get('/late', async () => 'limited');
      await after.register(async (scope) => {
        scope.get('/scoped', async () => 'limited too');
      });
      await after.ready();
      expect(codes).toEqual([]);
      await after.close();
    },
  );

  it('ERR_SLUICE_DOUBLE_COUNT: one hook placed twice on a route; silent for the global limit with app.rateLimit()', async () => {
    const app = frameworks[0]![1]();
    await app.register(sluice, { limit: 100, window: '1m' });
    app.get('/', { preHandler: app.rateLimit() }, async () => 'ok');
    const hook = app.rateLimit({ limit: 5, window: '1m' });
    app.get('/twice', { onRequest: hook, preHandler: hook }, async () => 'ok');
    await app.inject({ url: '/' });
    expect(codes).toEqual([]);
    await app.inject({ url: '/twice' });
    expect(codes).toEqual(['ERR_SLUICE_DOUBLE_COUNT']);
    await app.close();
  });
});

describe.each(eachFramework)('%s: the proxy warnings', (_name, framework) => proxyWarnings(framework));

describe('an app whose trust-proxy setting cannot be read', () => {
  it('answers its requests as usual, and warns of nothing', async () => {
    const app = expressVersions[0]![1]();
    app.use(rateLimiter({ limit: 1, window: '1m' }));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    // A broken setting reader, as a wrapper or a mock of the app might have.
    const get = app.get.bind(app);
    app.get = ((...args: unknown[]) => {
      if (args.length === 1 && args[0] === 'trust proxy') throw new Error('unreadable');
      return (get as (...a: unknown[]) => unknown)(...args);
    }) as never;
    expect((await request(app).get('/')).status).toBe(200);
    expect((await request(app).get('/')).status).toBe(429);
    expect(codes).toEqual([]);
  });
});

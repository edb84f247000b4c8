import type { rateLimiter as RateLimiter } from '@sluice/express';
import request from 'supertest';
import { expressVersions } from '../../packages/express/test/support.js';

/** @sluice/express loaded afresh (the check counts the limiters made in the process), and the codes warned. */
function freshExpress() {
  let rateLimiter!: typeof RateLimiter;
  jest.isolateModules(() => {
    ({ rateLimiter } = require('@sluice/express'));
  });
  return { rateLimiter, ...recordCodes() };
}

/** Every warning code emitted from now on (until `spy.mockRestore()`). */
function recordCodes() {
  const codes: string[] = [];
  const spy = jest.spyOn(process, 'emitWarning').mockImplementation(((_: string, o?: { code?: string }) => {
    if (o?.code) codes.push(o.code);
  }) as never);
  return { codes, spy };
}

/** @sluice/fastify loaded afresh, Fastify's test apps, and the codes warned. */
function freshFastify() {
  let sluice!: typeof import('@sluice/fastify').default;
  jest.isolateModules(() => {
    ({ default: sluice } = require('@sluice/fastify'));
  });
  const { frameworks } =
    require('../../packages/fastify/test/frameworks.js') as typeof import('../../packages/fastify/test/frameworks.js');
  return { sluice, frameworks, ...recordCodes() };
}

// ERR_SLUICE_CREATED_PER_REQUEST: limiters made while requests are served (inside a handler) never
// limit anything. The check counts the limiters made in the process: the adapter is loaded afresh here.
it('warns once when limiters are made inside a handler, and not for those made at start-up', async () => {
  const { rateLimiter, codes, spy } = freshExpress();
  const app = expressVersions[0]![1]();
  app.use(rateLimiter({ limit: 100, window: '1m' }));
  app.use(rateLimiter({ name: 'b', limit: 100, window: '1m' }));
  app.get('/', (req, res) =>
    rateLimiter({ name: 'per-request', limit: 1, window: '1m' })(req, res, () => res.send('ok')),
  );
  await request(app).get('/');
  expect(codes).toEqual([]);
  for (let i = 0; i < 3; i++) await request(app).get('/');
  expect(codes).toEqual(['ERR_SLUICE_CREATED_PER_REQUEST']);
  spy.mockRestore();
});

it('Fastify: warns once when hooks are made per request with app.rateLimit(options)', async () => {
  const { sluice, frameworks, codes, spy } = freshFastify();
  const app = frameworks[0]![1]();
  await app.register(sluice, { limit: 100, window: '1m' });
  app.get('/', async (request, reply) => {
    const hook = app.rateLimit({ name: 'per-request', limit: 1, window: '1m' });
    await new Promise<void>((resolve) => hook.call(app, request, reply, () => resolve()));
    return 'ok';
  });
  await app.inject({ url: '/' });
  expect(codes).toEqual([]);
  for (let i = 0; i < 3; i++) await app.inject({ url: '/' });
  expect(codes).toEqual(['ERR_SLUICE_CREATED_PER_REQUEST']);
  spy.mockRestore();
  await app.close();
});

// 6cc09fa warned when a process built several apps after one had started serving (tests, a
// multi-tenant server adding tenants): their limiters were made while requests were served.
it('is silent for apps built while another app serves', async () => {
  const { rateLimiter, codes, spy } = freshExpress();
  const serving = expressVersions[0]![1]();
  serving.use(rateLimiter({ limit: 100, window: '1m' }));
  serving.get('/', (_req, res) => void res.send('ok'));
  await request(serving).get('/');
  for (let i = 0; i < 5; i++) {
    const tenant = expressVersions[0]![1]();
    tenant.use(rateLimiter({ name: 'tenant', limit: 100, window: '1m' }));
    tenant.get('/', (_req, res) => void res.send('ok'));
    await request(tenant).get('/');
    await request(serving).get('/');
  }
  expect(codes).toEqual([]);
  spy.mockRestore();
});

// Found by the review of 19c2e33: Fastify's app.inject (a test's usual way) decides a request in the
// turn the app was built in, so three tests of one app each warned.
it('Fastify: silent for a new app per test, each injected once', async () => {
  const { sluice, frameworks, codes, spy } = freshFastify();
  for (let i = 0; i < 5; i++) {
    const app = frameworks[0]![1]();
    await app.register(sluice, { limit: 100, window: '1m' });
    app.get('/', async () => 'ok');
    await app.inject({ url: '/' });
    await app.close();
  }
  expect(codes).toEqual([]);
  spy.mockRestore();
});

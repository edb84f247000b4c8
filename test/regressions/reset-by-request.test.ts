import sluice from '@sluice/fastify';
import request from 'supertest';
import { frameworks } from '../../packages/fastify/test/frameworks.js';
import { eachFramework } from '../adapters/frameworks.js';
import { serving } from '../adapters/support.js';
import { expectOnlyWarnings } from '../support/warnings.js';

// Credentials without verify are what these cases send: the warning is expected, captured.
expectOnlyWarnings('ERR_SLUICE_UNVERIFIED_CREDENTIAL');

// `middleware.limiter.reset(req.ip)` resolved and reset nothing: the limiter's subject is `ip:…` (and
// hashed for credentials). The middleware has reset(req) and subjectOf(req) now; on Fastify,
// app.rateLimit() gives a hook with the same; on NestJS, the injected SluiceGuard. Failed on 13f5928
// (Express and Fastify then; every framework of the shared suite now: NestJS had no reset(req) at all).
describe.each(eachFramework)('%s: reset(req)', (_name, framework) => {
  const start = serving(framework);
  it('after a successful login gives the client its attempts back', async () => {
    const app = await start(
      { name: 'login', limit: 2, window: '1m', subject: ['api-key', 'ip'] },
      { resetOnLogin: true },
    );
    const attempt = (password: string) =>
      request(app.url).post(`/login?pw=${password}`).set('x-api-key', 'k1');
    expect((await attempt('wrong')).status).toBe(401);
    const ok = await attempt('right');
    expect(ok.status).toBe(200);
    expect(ok.body.subject).toMatch(/^key:/);
    expect(ok.body.subject).not.toContain('k1');
    expect((await attempt('wrong')).status).toBe(401);
    expect((await attempt('wrong')).status).toBe(401);
    expect((await attempt('wrong')).status).toBe(429);
  });
});

describe('Fastify: app.rateLimit()', () => {
  it('Fastify: app.rateLimit() limits the not-found handler and resets by request', async () => {
    const app = frameworks[0]![1]();
    await app.register(sluice, { limit: 2, window: '1m' });
    const hook = app.rateLimit();
    app.setNotFoundHandler({ preHandler: hook }, async (request, reply) => {
      return reply.code(404).send({ subject: await hook.subjectOf(request) });
    });
    app.get('/', async () => 'ok');
    const missing = () => app.inject({ url: '/nope' });
    expect((await missing()).json()).toEqual({ subject: 'ip:127.0.0.1' });
    expect((await missing()).statusCode).toBe(404);
    expect((await missing()).statusCode).toBe(429);
    await hook.limiter.reset('ip:127.0.0.1');
    expect((await missing()).statusCode).toBe(404);
    await app.close();
  });

  it('Fastify: a route that has the global limit is charged once when the hook is placed on it too', async () => {
    const app = frameworks[0]![1]();
    await app.register(sluice, { limit: 2, window: '1m' });
    app.get('/', { preHandler: app.rateLimit() }, async () => 'ok');
    expect((await app.inject({ url: '/' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/' })).statusCode).toBe(200);
    expect((await app.inject({ url: '/' })).statusCode).toBe(429);
    await app.close();
  });

  it('Fastify: app.rateLimit(options) is a limiter of its own', async () => {
    const app = frameworks[0]![1]();
    await app.register(sluice, { global: false, limit: 100, window: '1m' });
    app.setNotFoundHandler({ preHandler: app.rateLimit({ limit: 1, window: '1m' }) }, async (_r, reply) =>
      reply.code(404).send('missing'),
    );
    expect((await app.inject({ url: '/a' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/b' })).statusCode).toBe(429);
    await app.close();
  });
});

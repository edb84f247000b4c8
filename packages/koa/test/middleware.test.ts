import type { Server } from 'node:http';
import { ErrorCodes, SluiceConfigError } from '@sluice/core';
import { privateProxyIp, type RateLimiterOptions, rateLimiter } from '@sluice/koa';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import request from 'supertest';
import { recordWarnings } from '../../../test/support/warnings.js';

// Every HTTP option's behaviour is proven once for all frameworks in test/adapters; here, what only
// the Koa middleware has: ctx.state.rateLimit, mounting, reset(ctx), and reading Koa's proxy settings.
describe.each([
  ['Koa 3', Koa3],
  ['Koa 2', Koa2 as unknown as typeof Koa3],
])('%s', (_, Koa) => {
  const servers: Server[] = [];
  afterEach(() => {
    for (const server of servers.splice(0)) server.close();
  });

  /** An app limited by `options`; `GET /` answers what the route sees; `configure` sets the app up first. */
  function appWith(options: RateLimiterOptions, configure: (app: Koa3) => void = () => {}): Server {
    const app = new Koa();
    configure(app);
    const limit = rateLimiter(options);
    app.use(limit);
    app.use(async (ctx) => {
      if (ctx.path === '/login') {
        if (ctx.get('x-password') === 'right') {
          await limit.reset(ctx);
          ctx.body = { subject: await limit.subjectOf(ctx) };
        } else ctx.status = 401;
        return;
      }
      ctx.body = { remaining: ctx.state.rateLimit?.remaining ?? null, ip: ctx.ip };
    });
    const server = app.listen(0, '127.0.0.1');
    servers.push(server);
    return server;
  }

  test('ctx.state.rateLimit holds the decision; undefined when skipped', async () => {
    const server = appWith({ limit: 2, window: '1m', skip: (ctx) => ctx.get('x-free') === '1' });
    expect((await request(server).get('/')).body.remaining).toBe(1);
    expect((await request(server).get('/').set('x-free', '1')).body.remaining).toBeNull();
  });

  test('reset(ctx) gives the subject its attempts back; subjectOf(ctx) names it', async () => {
    const server = appWith({ name: 'login', limit: 2, window: '1m' });
    const attempt = (password: string) => request(server).post('/login').set('x-password', password);
    expect((await attempt('wrong')).status).toBe(401);
    expect((await attempt('right')).body).toEqual({ subject: 'ip:127.0.0.1' });
    expect((await attempt('wrong')).status).toBe(401);
    expect((await attempt('wrong')).status).toBe(401);
    expect((await attempt('wrong')).status).toBe(429);
  });

  test("app.proxy with maxIpsCount: the address the trusted proxy appended is the client's", async () => {
    const server = appWith({ limit: 1, window: '1m' }, (app) => {
      app.proxy = true;
      app.maxIpsCount = 1;
    });
    const from = (xff: string) => request(server).get('/').set('x-forwarded-for', xff);
    expect((await from('6.6.6.6, 1.1.1.1')).body.ip).toBe('1.1.1.1');
    expect((await from('7.7.7.7, 1.1.1.1')).status).toBe(429);
    expect((await from('6.6.6.6, 2.2.2.2')).status).toBe(200);
  });

  test('getIp: privateProxyIp, app.proxy off: the entry a proxy on the private network (here loopback) appended', async () => {
    const server = appWith({ name: 'login', limit: 1, window: '1m', getIp: privateProxyIp });
    const from = (xff: string) =>
      request(server).post('/login').set('x-forwarded-for', xff).set('x-password', 'right');
    expect((await from('6.6.6.6, 203.0.113.1')).body).toEqual({ subject: 'ip:203.0.113.1' });
    expect((await from('10.0.0.9, 203.0.113.2')).body).toEqual({ subject: 'ip:203.0.113.2' });
  });

  test('getIp that is no function: ERR_SLUICE_INVALID_OPTION', () => {
    expect(() => rateLimiter({ limit: 1, window: '1m', getIp: 'x-forwarded-for' as never })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION, option: 'getIp' }),
    );
  });

  describe('validation warnings', () => {
    const { codes } = recordWarnings();

    const proxied = async (configure?: (app: Koa3) => void) => {
      const server = appWith({ limit: 100, window: '1m' }, configure);
      for (let i = 0; i < 3; i++) await request(server).get('/').set('x-forwarded-for', '203.0.113.9');
    };

    test('ERR_SLUICE_FORWARDED_IGNORED: a proxied request while app.proxy is off, once', async () => {
      await proxied();
      expect(codes).toEqual(['ERR_SLUICE_FORWARDED_IGNORED']);
    });

    test('ERR_SLUICE_TRUST_PROXY_ALL: app.proxy without maxIpsCount (the client writes the first entry)', async () => {
      await proxied((app) => {
        app.proxy = true;
      });
      expect(codes).toEqual(['ERR_SLUICE_TRUST_PROXY_ALL']);
    });

    test('silent behind one proxy: app.proxy with maxIpsCount 1', async () => {
      await proxied((app) => {
        app.proxy = true;
        app.maxIpsCount = 1;
      });
      expect(codes).toEqual([]);
    });

    test('ERR_SLUICE_DOUBLE_COUNT: one middleware used twice', async () => {
      const app = new Koa();
      const limit = rateLimiter({ limit: 100, window: '1m' });
      app.use(limit);
      app.use(limit);
      app.use((ctx) => {
        ctx.body = 'ok';
      });
      const server = app.listen(0, '127.0.0.1');
      servers.push(server);
      await request(server).get('/');
      expect(codes).toEqual(['ERR_SLUICE_DOUBLE_COUNT']);
    });
  });
});

test('options are checked when rateLimiter() is called', () => {
  expect(() => rateLimiter({ limit: 1, window: '1m', max: 3 } as RateLimiterOptions)).toThrow(
    SluiceConfigError,
  );
  expect(() => rateLimiter({ limit: 1, window: 'soon' })).toThrow(
    expect.objectContaining({ code: ErrorCodes.INVALID_DURATION }),
  );
});

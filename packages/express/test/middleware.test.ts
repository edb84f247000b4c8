import { type Decision, ErrorCodes, MemoryStore, SluiceConfigError } from '@sluice/core';
import { type RateLimitMiddleware, rateLimiter } from '@sluice/express';
import request from 'supertest';
import { failingStore } from '../../../test/fixtures/stores.js';
import { errorsAsJson, expressVersions } from './support.js';

describe.each(expressVersions)('%s', (_, makeApp, makeRouter) => {
  function appWith(options: Parameters<typeof rateLimiter>[0]) {
    const app = makeApp();
    app.use(rateLimiter(options));
    app.get('/', (req, res) => {
      res.json({ rateLimit: req.rateLimit === undefined ? null : { remaining: req.rateLimit.remaining } });
    });
    errorsAsJson(app);
    return app;
  }

  async function statuses(app: Parameters<typeof request>[0], n: number, path = '/') {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await request(app).get(path)).status);
    return out;
  }

  describe('where it mounts', () => {
    test('app.use limits every route; req.rateLimit holds the decision', async () => {
      const app = appWith({ limit: 2, window: '1m' });
      const res = await request(app).get('/');
      expect(res.body).toEqual({ rateLimit: { remaining: 1 } });
      expect(await statuses(app, 2)).toEqual([200, 429]);
    });

    test('on a router, and on single routes with their own limits', async () => {
      const app = makeApp();
      const api = makeRouter();
      api.use(rateLimiter({ limit: 1, window: '1m' }));
      api.get('/a', (_req, res) => {
        res.send('a');
      });
      app.use('/api', api);
      app.get('/login', rateLimiter({ name: 'login', limit: 2, window: '1m' }), (_req, res) => {
        res.send('login');
      });
      app.get('/search', rateLimiter({ name: 'search', limit: 3, window: '1m' }), (_req, res) => {
        res.send('search');
      });
      app.get('/free', (_req, res) => {
        res.send('free');
      });
      expect(await statuses(app, 2, '/api/a')).toEqual([200, 429]);
      expect(await statuses(app, 3, '/login')).toEqual([200, 200, 429]);
      expect(await statuses(app, 4, '/search')).toEqual([200, 200, 200, 429]);
      expect(await statuses(app, 5, '/free')).toEqual([200, 200, 200, 200, 200]);
    });

    test('two routes with one store and one name share a counter; other names do not', async () => {
      const app = makeApp();
      const store = new MemoryStore();
      const ok = (_req: unknown, res: { send(s: string): void }) => res.send('ok');
      app.get('/a', rateLimiter({ store, name: 'shared', limit: 3, window: '1m' }), ok);
      app.get('/b', rateLimiter({ store, name: 'shared', limit: 3, window: '1m' }), ok);
      app.get('/c', rateLimiter({ store, name: 'other', limit: 3, window: '1m' }), ok);
      expect(await statuses(app, 2, '/a')).toEqual([200, 200]);
      expect(await statuses(app, 2, '/b')).toEqual([200, 429]);
      expect(await statuses(app, 1, '/a')).toEqual([429]);
      expect(await statuses(app, 3, '/c')).toEqual([200, 200, 200]);
    });

    test('the limiter option shares one limiter between routes', async () => {
      const app = makeApp();
      const first = rateLimiter({ limit: 2, window: '1m' });
      const second = rateLimiter({ limiter: first.limiter, headers: 'draft-7' });
      app.get('/a', first, (_req, res) => {
        res.send('a');
      });
      app.get('/b', second, (_req, res) => {
        res.send('b');
      });
      await request(app).get('/a');
      const b = await request(app).get('/b');
      expect(b.headers.ratelimit).toMatch(/^limit=2, remaining=0, reset=\d+$/);
      expect((await request(app).get('/a')).status).toBe(429);
    });

    test('the same name with other policies on one store warns once (ERR_SLUICE_NAME_REUSE)', () => {
      const store = new MemoryStore();
      const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => {});
      try {
        // Other warnings may come too (limiters of one name made while this run serves requests).
        const reuses = () =>
          warn.mock.calls.filter(([, o]) => (o as { code?: string })?.code === ErrorCodes.NAME_REUSE);
        rateLimiter({ store, name: 'reused', limit: 1, window: '1m' });
        rateLimiter({ store, name: 'reused', limit: 1, window: '1m' });
        expect(reuses()).toHaveLength(0);
        rateLimiter({ store, name: 'reused', limit: 9, window: '1m' });
        rateLimiter({ store, name: 'reused', limit: 7, window: '1m' });
        expect(reuses()).toHaveLength(1);
      } finally {
        warn.mockRestore();
      }
    });
  });

  describe('req.rateLimit', () => {
    test('is kept off the request itself (Express requests each have a hidden class of their own) and outlives a mounted app', async () => {
      const app = makeApp();
      const sub = makeApp();
      sub.use(rateLimiter({ limit: 5, window: '1m' }));
      app.use('/sub', sub);
      // Nothing in the sub-app answers: the request comes back out to its parent app.
      app.get('/sub', (req, res) => {
        res.json({ remaining: req.rateLimit?.remaining, inherited: Object.hasOwn(req, 'rateLimit') });
      });
      const res = await request(app).get('/sub');
      expect(res.body).toEqual({ remaining: 4, inherited: false });
    });

    test('is undefined on requests Sluice did not decide, and user code can set and read it', async () => {
      const app = makeApp();
      app.get('/limited', rateLimiter({ limit: 5, window: '1m' }), (req, res) => {
        res.json({ remaining: req.rateLimit?.remaining });
      });
      app.get('/free', (req, res) => {
        const before = req.rateLimit;
        req.rateLimit = { remaining: 7 } as Decision;
        res.json({ before: before ?? null, after: req.rateLimit?.remaining });
      });
      expect((await request(app).get('/limited')).body).toEqual({ remaining: 4 });
      expect((await request(app).get('/free')).body).toEqual({ before: null, after: 7 });
      expect((await request(app).get('/limited')).body).toEqual({ remaining: 3 });
    });

    test('a request outside Express gets it as its own property', () => {
      const req = { ip: '10.0.0.1', headers: {} } as unknown as Parameters<RateLimitMiddleware>[0];
      const res = { setHeader() {} } as unknown as Parameters<RateLimitMiddleware>[1];
      let passed = false;
      rateLimiter({ limit: 5, window: '1m' })(req, res, () => {
        passed = true;
      });
      expect(passed).toBe(true);
      expect(Object.hasOwn(req, 'rateLimit')).toBe(true);
      expect(req.rateLimit?.remaining).toBe(4);
    });
  });

  describe('options are checked when rateLimiter() is called', () => {
    test.each<[string, Record<string, unknown>, string]>([
      ['unknown option', { limit: 1, window: '1m', max: 3 }, ErrorCodes.UNKNOWN_OPTION],
      ['bad duration', { limit: 1, window: 'soon' }, ErrorCodes.INVALID_DURATION],
      ['bad headers', { limit: 1, window: '1m', headers: 'draft-9' }, ErrorCodes.INVALID_OPTION],
      [
        'limiter with core options',
        { limit: 1, window: '1m', limiter: rateLimiter({ limit: 1, window: '1s' }).limiter },
        ErrorCodes.CONFLICTING_OPTIONS,
      ],
    ])('%s', (_name, options, code) => {
      expect(() => rateLimiter(options)).toThrow(SluiceConfigError);
      expect(() => rateLimiter(options)).toThrow(expect.objectContaining({ code }));
    });
  });

  describe('answers', () => {
    test('429: Retry-After, RateLimit fields, problem+json body', async () => {
      const app = appWith({ limit: 1, window: '1m', algorithm: 'fixed-window' });
      await request(app).get('/');
      const res = await request(app).get('/');
      expect(res.status).toBe(429);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(res.headers.ratelimit).toMatch(/^"1-per-1m";r=0;t=\d+$/);
      expect(JSON.parse(res.text)).toEqual({
        status: 429,
        title: 'Too Many Requests',
        detail: expect.stringContaining('"1-per-1m"'),
        policy: '1-per-1m',
        retryAfter: Number(res.headers['retry-after']),
      });
    });

    test('403 for denyList (no Retry-After), matched on the IP or the raw key', async () => {
      const app = appWith({ limit: 5, window: '1m', subject: ['api-key', 'ip'], denyList: ['stolen-key'] });
      const res = await request(app).get('/').set('x-api-key', 'stolen-key');
      expect(res.status).toBe(403);
      expect(res.headers['retry-after']).toBeUndefined();
      expect(JSON.parse(res.text)).toMatchObject({ status: 403, policy: 'deny-list' });
      expect((await request(app).get('/').set('x-api-key', 'fine')).status).toBe(200);
    });

    test('403 for a ban with Retry-After until it ends', async () => {
      const app = appWith({ limit: 1, window: '1m', ban: { after: 2, for: '2h' } });
      expect(await statuses(app, 3)).toEqual([200, 429, 429]);
      const res = await request(app).get('/');
      expect(res.status).toBe(403);
      expect(res.headers['retry-after']).toBe('7200');
      expect(JSON.parse(res.text)).toMatchObject({ status: 403, policy: 'ban', retryAfter: 7200 });
    });

    test('503 with Retry-After: 1 when the store fails and onStoreError is deny', async () => {
      const onDecision = jest.fn();
      const app = appWith({
        limit: 5,
        window: '1m',
        store: failingStore(),
        onStoreError: 'deny',
        onDecision,
      });
      const res = await request(app).get('/');
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(JSON.parse(res.text)).toMatchObject({
        status: 503,
        title: 'Service Unavailable',
        retryAfter: 1,
      });
      expect(onDecision.mock.calls[0]![1]).toMatchObject({
        allowed: false,
        reason: 'store-error',
        degraded: true,
      });
    });

    test('onStoreError allow passes requests on when the store fails', async () => {
      const app = appWith({ limit: 1, window: '1m', store: failingStore(), onStoreError: 'allow' });
      expect(await statuses(app, 3)).toEqual([200, 200, 200]);
    });

    test('statusCode and handler', async () => {
      const seen: Decision[] = [];
      const app = makeApp();
      app.use(
        rateLimiter({
          limit: 1,
          window: '1m',
          statusCode: 418,
          handler: (req, res, decision) => {
            seen.push(decision);
            res.status(418).json({ slowDown: decision.policy, same: req.rateLimit === decision });
          },
        }),
      );
      app.get('/', (_req, res) => {
        res.send('ok');
      });
      await request(app).get('/');
      const res = await request(app).get('/');
      expect(res.status).toBe(418);
      expect(res.body).toEqual({ slowDown: '1-per-1m', same: true });
      expect(res.headers['retry-after']).toBeDefined();
      expect(seen).toHaveLength(1);
    });

    test('a handler that throws goes to the error handler', async () => {
      const app = appWith({
        limit: 1,
        window: '1m',
        handler: () => {
          throw new Error('handler broke');
        },
      });
      await request(app).get('/');
      const res = await request(app).get('/');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'handler broke' });
    });

    test('statusCode alone changes the status of the problem body', async () => {
      const app = appWith({ limit: 1, window: '1m', statusCode: 503 });
      await request(app).get('/');
      const res = await request(app).get('/');
      expect(res.status).toBe(503);
      expect(JSON.parse(res.text).status).toBe(503);
    });
  });

  describe('options per request', () => {
    test('skip: never limited, nothing counted, no headers', async () => {
      const app = appWith({
        limit: 1,
        window: '1m',
        skip: (req) => req.path === '/' && req.query.free === '1',
      });
      for (let i = 0; i < 3; i++) {
        const res = await request(app).get('/?free=1');
        expect(res.status).toBe(200);
        expect(res.headers.ratelimit).toBeUndefined();
        expect(res.body.rateLimit).toBeNull();
      }
      expect(await statuses(app, 2)).toEqual([200, 429]);
    });

    test('async skip is awaited', async () => {
      const app = appWith({ limit: 1, window: '1m', skip: async () => true });
      expect(await statuses(app, 3)).toEqual([200, 200, 200]);
    });

    test('allowList: IP strings (the loopback address in any spelling)', async () => {
      const app = appWith({ limit: 1, window: '1m', allowList: ['127.0.0.1', '::1'] });
      expect(await statuses(app, 3)).toEqual([200, 200, 200]);
    });

    test('allowList: a function of the request and the subject; a verified subject', async () => {
      const byFn = appWith({
        limit: 1,
        window: '1m',
        subject: 'api-key',
        allowList: (req, subject) => req.headers['x-internal'] === 'yes' || subject === 'partner',
      });
      for (let i = 0; i < 3; i++) {
        expect((await request(byFn).get('/').set('x-internal', 'yes')).status).toBe(200);
        expect((await request(byFn).get('/').set('x-api-key', 'partner')).status).toBe(200);
      }
      expect((await request(byFn).get('/').set('x-api-key', 'other')).status).toBe(200);
      expect((await request(byFn).get('/').set('x-api-key', 'other')).status).toBe(429);
      const verified = appWith({
        limit: 1,
        window: '1m',
        subject: 'api-key',
        verify: (key) => (key.startsWith('acme-') ? 'acme' : null),
        allowList: ['acme'],
      });
      for (let i = 0; i < 3; i++) {
        expect((await request(verified).get('/').set('x-api-key', `acme-${i}`)).body.rateLimit).toBeNull();
      }
    });

    test('cost: a number and a function', async () => {
      const fixed = appWith({ limit: 10, window: '1m', cost: 4 });
      expect(await statuses(fixed, 3)).toEqual([200, 200, 429]);
      const bySize = appWith({ limit: 10, window: '1m', cost: (req) => Number(req.headers['x-units'] ?? 1) });
      const res = await request(bySize).get('/').set('x-units', '6');
      expect(res.body).toEqual({ rateLimit: { remaining: 4 } });
    });

    test('onDecision: every decision', async () => {
      const seen: boolean[] = [];
      const app = appWith({ limit: 1, window: '1m', onDecision: (_req, d) => seen.push(d.allowed) });
      await statuses(app, 3);
      expect(seen).toEqual([true, false, false]);
    });

    test('shadow: decides and reports, never blocks', async () => {
      const seen: boolean[] = [];
      const app = appWith({
        limit: 1,
        window: '1m',
        shadow: true,
        onDecision: (_req, d) => seen.push(d.allowed),
      });
      const res = await Promise.all([request(app).get('/'), request(app).get('/'), request(app).get('/')]);
      expect(res.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(seen.filter((a) => !a)).toHaveLength(2);
      expect(res.every((r) => r.headers.ratelimit !== undefined)).toBe(true);
    });

    test('skipFailedRequests: failed responses give their charge back', async () => {
      const app = makeApp();
      app.use(rateLimiter({ limit: 2, window: '1m', algorithm: 'fixed-window', skipFailedRequests: true }));
      app.get('/fail', (_req, res) => {
        res.status(500).send('no');
      });
      app.get('/ok', (_req, res) => {
        res.send('ok');
      });
      for (let i = 0; i < 5; i++) expect((await request(app).get('/fail')).status).toBe(500);
      expect(await statuses(app, 3, '/ok')).toEqual([200, 200, 429]);
    });

    test('skipSuccessfulRequests: successful responses give their charge back', async () => {
      const app = makeApp();
      app.use(
        rateLimiter({ limit: 2, window: '1m', algorithm: 'fixed-window', skipSuccessfulRequests: true }),
      );
      app.post('/login', (req, res) => {
        res.status(req.query.pw === 'right' ? 200 : 401).send('');
      });
      for (let i = 0; i < 5; i++) expect((await request(app).post('/login?pw=right')).status).toBe(200);
      expect((await request(app).post('/login?pw=wrong')).status).toBe(401);
      expect((await request(app).post('/login?pw=wrong')).status).toBe(401);
      expect((await request(app).post('/login?pw=right')).status).toBe(429);
    });
  });

  describe('errors of user callbacks go to next(err), never crash or hang', () => {
    const boom = () => {
      throw new Error('callback failed');
    };
    test.each<[string, Parameters<typeof rateLimiter>[0]]>([
      ['subject', { limit: 1, window: '1m', subject: boom }],
      [
        'async subject',
        { limit: 1, window: '1m', subject: async () => Promise.reject(new Error('callback failed')) },
      ],
      ['verify', { limit: 1, window: '1m', subject: 'api-key', verify: boom }],
      ['cost', { limit: 1, window: '1m', cost: boom }],
      ['skip', { limit: 1, window: '1m', skip: boom }],
      ['allowList', { limit: 1, window: '1m', allowList: boom }],
    ])('%s', async (_name, options) => {
      const app = appWith(options);
      const res = await request(app).get('/').set('x-api-key', 'k');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: 'callback failed' });
    });

    test('a cost function returning nonsense is an error too', async () => {
      const app = appWith({ limit: 1, window: '1m', cost: () => -1 });
      const res = await request(app).get('/');
      expect(res.status).toBe(500);
      expect(res.body.error).toMatch(/cost/);
    });
  });
});

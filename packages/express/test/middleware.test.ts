import { type Decision, ErrorCodes, MemoryStore, SluiceConfigError } from '@sluice/core';
import { type RateLimitMiddleware, rateLimiter } from '@sluice/express';
import request from 'supertest';
import { errorsAsJson, expressVersions } from './support.js';

// Every HTTP option's behaviour is proven once for all frameworks in test/adapters; here, what only
// Express has: where the middleware mounts, and where req.rateLimit is kept.
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
});

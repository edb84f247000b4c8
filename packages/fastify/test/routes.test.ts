import { createLimiter, MemoryStore, SluiceConfigError } from '@sluice/core';
import sluice, { type SluiceFastifyOptions } from '@sluice/fastify';
import type { FastifyInstance } from 'fastify';
import { recordWarnings } from '../../../test/support/warnings.js';
import { alignedClock, frameworks, type MakeApp, recording } from './support.js';

describe.each(frameworks)('%s: global and per-route limits', (_, makeApp: MakeApp) => {
  const apps: FastifyInstance[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  function app(): FastifyInstance {
    const made = makeApp();
    apps.push(made);
    return made;
  }

  /** An app with the plugin registered; on a fresh memory store with an aligned clock unless `options` gives one. */
  async function limited(options: SluiceFastifyOptions): Promise<FastifyInstance> {
    const a = app();
    await a.register(sluice, { store: new MemoryStore({ clock: alignedClock() }), ...options });
    return a;
  }

  const ok = async () => 'ok';
  const twoPerMinute = () =>
    createLimiter({ limit: 2, window: '1m', store: new MemoryStore({ clock: alignedClock() }) });

  async function statuses(
    target: FastifyInstance,
    requests: (string | [string, string])[],
  ): Promise<number[]> {
    const out: number[] = [];
    for (const r of requests) {
      const [method, url] = typeof r === 'string' ? ['GET', r] : r;
      out.push((await target.inject({ method: method as 'GET', url })).statusCode);
    }
    return out;
  }

  test("the global limit covers every route with one counter, named 'global'", async () => {
    const store = recording(new MemoryStore({ clock: alignedClock() }));
    const a = await limited({ limit: 2, window: '1m', store });
    a.get('/a', ok);
    a.post('/b', ok);
    expect(await statuses(a, ['/a', ['POST', '/b'], '/a', ['POST', '/b']])).toEqual([200, 200, 429, 429]);
    expect(new Set(store.names)).toEqual(new Set(['global']));
  });

  test('config.rateLimit replaces the global options for its route, with its own counter and name', async () => {
    const store = recording(new MemoryStore({ clock: alignedClock() }));
    const a = await limited({ limit: 5, window: '1m', store });
    a.get('/search', { config: { rateLimit: { limit: 1, window: '1s' } } }, ok);
    a.get('/other', ok);
    expect(await statuses(a, ['/search', '/search', '/other', '/other'])).toEqual([200, 429, 200, 200]);
    const answer = await a.inject({ method: 'GET', url: '/search' });
    expect(answer.headers['ratelimit-policy']).toBe('"1-per-1s";q=1;w=1');
    expect(new Set(store.names)).toEqual(new Set(['GET /search', 'global']));
  });

  test('a route inherits what its config.rateLimit does not set', async () => {
    const a = await limited({ limit: 5, window: '1m', headers: 'draft-7', statusCode: 418 });
    a.get('/one', { config: { rateLimit: { limit: 1 } } }, ok);
    await a.inject({ method: 'GET', url: '/one' });
    const denied = await a.inject({ method: 'GET', url: '/one' });
    expect(denied.statusCode).toBe(418);
    expect(denied.headers['ratelimit-policy']).toBe('1;w=60');
  });

  test('a route choosing another algorithm does not inherit burst or delay', async () => {
    const a = await limited({ limit: 5, window: '1m', algorithm: 'leaky-bucket', burst: 2, delay: false });
    a.get('/fw', { config: { rateLimit: { algorithm: 'fixed-window' } } }, ok);
    expect(await statuses(a, ['/fw', '/fw', '/fw', '/fw', '/fw', '/fw'])).toEqual([
      200, 200, 200, 200, 200, 429,
    ]);
  });

  test('policies and the shorthand replace each other as a whole', async () => {
    const a = await limited({ policies: [{ name: 'p', limit: 5, window: '1m' }] });
    a.get('/short', { config: { rateLimit: { limit: 1, window: '1m' } } }, ok);
    expect(await statuses(a, ['/short', '/short'])).toEqual([200, 429]);
    const b = await limited({ limit: 5, window: '1m' });
    b.get('/long', { config: { rateLimit: { policies: [{ name: 'q', limit: 1, window: '1h' }] } } }, ok);
    expect(await statuses(b, ['/long', '/long'])).toEqual([200, 429]);
  });

  test('config.rateLimit false: not limited, no headers, no request.rateLimit', async () => {
    const a = app();
    await a.register(sluice, { limit: 1, window: '1m' });
    a.get('/health', { config: { rateLimit: false } }, async (request) => ({
      decision: request.rateLimit ?? null,
    }));
    for (let i = 0; i < 3; i++) {
      const answer = await a.inject({ method: 'GET', url: '/health' });
      expect(answer.statusCode).toBe(200);
      expect(answer.headers.ratelimit).toBeUndefined();
      expect(answer.json().decision).toBeNull();
    }
  });

  test('global: false limits only routes with config.rateLimit, which inherit the plugin options', async () => {
    const a = app();
    await a.register(sluice, { global: false, limit: 1, window: '1m' });
    a.get('/open', ok);
    a.get('/guarded', { config: { rateLimit: {} } }, ok);
    expect(await statuses(a, ['/open', '/open', '/open', '/guarded', '/guarded'])).toEqual([
      200, 200, 200, 200, 429,
    ]);
    expect((await a.inject({ method: 'GET', url: '/open' })).headers.ratelimit).toBeUndefined();
  });

  test('routes with the same name share counters; unnamed routes do not', async () => {
    const a = app();
    await a.register(sluice, { global: false, limit: 2, window: '1m' });
    a.get('/x', { config: { rateLimit: { name: 'shared' } } }, ok);
    a.get('/y', { config: { rateLimit: { name: 'shared' } } }, ok);
    a.get('/p', { config: { rateLimit: {} } }, ok);
    a.get('/q', { config: { rateLimit: {} } }, ok);
    expect(await statuses(a, ['/x', '/y', '/x', '/y'])).toEqual([200, 200, 429, 429]);
    expect(await statuses(a, ['/p', '/q', '/p', '/q', '/p'])).toEqual([200, 200, 200, 200, 429]);
  });

  test('one options object on two routes still gives each route its own counter', async () => {
    const a = app();
    await a.register(sluice, { global: false });
    const rateLimit = { limit: 1, window: '1m' };
    a.get('/m', { config: { rateLimit } }, ok);
    a.post('/m', { config: { rateLimit } }, ok);
    expect(await statuses(a, ['/m', ['POST', '/m'], '/m'])).toEqual([200, 200, 429]);
  });

  /** Route shapes that get an automatic HEAD route: how each is declared, its GET and HEAD paths, its limiter's name. */
  const own = { config: { rateLimit: { limit: 3, window: '1m' } } };
  const headShapes: [
    string,
    SluiceFastifyOptions,
    (a: FastifyInstance) => unknown,
    string,
    string,
    string,
  ][] = [
    [
      'a GET route with config.rateLimit',
      { global: false },
      (a) => a.get('/r', own, ok),
      '/r',
      '/r',
      'GET /r',
    ],
    [
      "method: ['GET', 'POST'] with config.rateLimit",
      { global: false },
      (a) => a.route({ method: ['GET', 'POST'], url: '/r', ...own, handler: ok }),
      '/r',
      '/r',
      'GET,POST /r',
    ],
    [
      "method: 'GET' with exposeHeadRoute: true",
      { global: false },
      (a) => a.route({ method: 'GET', url: '/r', exposeHeadRoute: true, ...own, handler: ok }),
      '/r',
      '/r',
      'GET /r',
    ],
    [
      "a prefix's root route, HEAD on /v1/",
      { global: false },
      (a) => a.register(async (v1) => v1.get('/', own, ok), { prefix: '/v1' }),
      '/v1',
      '/v1/',
      'GET /v1',
    ],
    [
      'a GET route under the global limit',
      { limit: 3, window: '1m' },
      (a) => a.get('/r', ok),
      '/r',
      '/r',
      'global',
    ],
    [
      "method: ['GET', 'POST'] under the global limit",
      { limit: 3, window: '1m' },
      (a) => a.route({ method: ['GET', 'POST'], url: '/r', handler: ok }),
      '/r',
      '/r',
      'global',
    ],
  ];

  test.each(headShapes)(
    'the automatic HEAD route counts with its GET route: %s',
    async (_, options, declare, get, head, name) => {
      const store = recording(new MemoryStore({ clock: alignedClock() }));
      const a = await limited({ ...options, store });
      await declare(a);
      // Over a real socket: the HEAD request is the one a client sends, not one built by inject.
      const base = await a.listen({ host: '127.0.0.1', port: 0 });
      const answers: number[] = [];
      for (const [method, path] of [
        ['GET', get],
        ['HEAD', head],
        ['GET', get],
        ['HEAD', head],
        ['GET', get],
        ['HEAD', head],
      ]) {
        answers.push((await fetch(`${base}${path}`, { method })).status);
      }
      expect(answers).toEqual([200, 200, 200, 429, 429, 429]);
      expect(new Set(store.names)).toEqual(new Set([name]));
    },
  );

  test("a route's name includes the prefix it is registered under", async () => {
    const store = recording(new MemoryStore({ clock: alignedClock() }));
    const a = await limited({ global: false, store });
    await a.register(
      async (v1) => {
        v1.get('/search', { config: { rateLimit: { limit: 1, window: '1m' } } }, ok);
      },
      { prefix: '/v1' },
    );
    expect(await statuses(a, ['/v1/search', '/v1/search'])).toEqual([200, 429]);
    expect(store.names).toEqual(['GET /v1/search', 'GET /v1/search']);
  });

  test('a route may use its own hook', async () => {
    const a = app();
    a.decorateRequest('user', null);
    a.addHook('preHandler', async (request) => {
      (request as unknown as { user: unknown }).user = request.headers['x-user'];
    });
    await a.register(sluice, {
      global: false,
      limit: 1,
      window: '1m',
      subject: (request) => (request as unknown as { user: string | undefined }).user,
    });
    a.get('/me', { config: { rateLimit: { hook: 'preHandler' } } }, ok);
    const as = (user: string) => a.inject({ method: 'GET', url: '/me', headers: { 'x-user': user } });
    expect([
      (await as('ann')).statusCode,
      (await as('bob')).statusCode,
      (await as('ann')).statusCode,
    ]).toEqual([200, 200, 429]);
  });

  test('a limiter given in config.rateLimit is used as it is, shared between routes', async () => {
    const limiter = twoPerMinute();
    const a = app();
    await a.register(sluice, { limit: 100, window: '1m' });
    a.get('/l1', { config: { rateLimit: { limiter } } }, ok);
    a.get('/l2', { config: { rateLimit: { limiter } } }, ok);
    expect(await statuses(a, ['/l1', '/l2', '/l1'])).toEqual([200, 200, 429]);
  });

  test('with a global `limiter`, a route inherits it unless it builds a limiter of its own', async () => {
    const limiter = twoPerMinute();
    const a = app();
    await a.register(sluice, { limiter });
    a.get('/plain', ok);
    a.get('/drafty', { config: { rateLimit: { headers: 'draft-7' } } }, ok);
    a.get('/own', { config: { rateLimit: { limit: 1, window: '1m' } } }, ok);
    expect(await statuses(a, ['/plain', '/drafty', '/plain'])).toEqual([200, 200, 429]);
    expect(await statuses(a, ['/own', '/own'])).toEqual([200, 429]);
  });

  test("a route's hooks of the same kind run first, and its hook array is not changed", async () => {
    const order: string[] = [];
    const own = [
      (_r: unknown, _p: unknown, done: () => void) => {
        order.push('route hook');
        done();
      },
    ];
    const a = app();
    await a.register(sluice, {
      limit: 5,
      window: '1m',
      onDecision: () => order.push('limit'),
    });
    a.get('/h', { onRequest: own }, ok);
    await a.inject({ method: 'GET', url: '/h' });
    expect(order).toEqual(['route hook', 'limit']);
    expect(own).toHaveLength(1);
  });

  describe('encapsulation', () => {
    const warnings = recordWarnings();

    test('registered in a child context, it limits only that context', async () => {
      const a = app();
      a.get('/root', ok);
      await a.register(async (child) => {
        await child.register(sluice, { limit: 1, window: '1m' });
        child.get('/child', ok);
      });
      await a.register(async (sibling) => {
        sibling.get('/sibling', ok);
      });
      expect(await statuses(a, ['/child', '/child'])).toEqual([200, 429]);
      expect(await statuses(a, ['/root', '/root', '/sibling', '/sibling'])).toEqual([200, 200, 200, 200]);
      // The routes outside its context are named, as they should be, and the fix shows the awaited register.
      expect(warnings.codes).toEqual(['ERR_SLUICE_UNLIMITED_ROUTES']);
      expect(warnings.messages[0]).toContain('await app.register(sluice, { ... }) before app.get(...)');
    });

    test('registered at the root, it limits the routes of child contexts too', async () => {
      const a = app();
      await a.register(sluice, { limit: 1, window: '1m' });
      await a.register(async (child) => {
        child.get('/deep', ok);
      });
      expect(await statuses(a, ['/deep', '/deep'])).toEqual([200, 429]);
    });

    // 608b870 read printRoutes' tree line by line: a route under a prefix (`/api/users/:id`, printed as
    // `/:id` beneath `users`) was named unlimited though the plugin limits it.
    test('registered at the root, routes under prefixes are not named unlimited; the unlimited ones are, in full', async () => {
      const a = app();
      a.get('/before/:id', ok);
      await a.register(sluice, { limit: 1, window: '1m' });
      a.get('/', ok);
      await a.register(
        async (api) => {
          api.get('/', ok);
          api.get('/users', ok);
          api.get('/users/:id', ok);
        },
        { prefix: '/api' },
      );
      await a.register(async (deep) => deep.get('/x', ok), { prefix: '/v1/deep' });
      // One global counter: the second request, on another prefix, is over it.
      expect(await statuses(a, ['/api/users/7', '/v1/deep/x'])).toEqual([200, 429]);
      expect(warnings.codes).toEqual(['ERR_SLUICE_UNLIMITED_ROUTES']);
      expect(warnings.messages[0]).toContain('2 route(s) (GET /before/:id, HEAD /before/:id)');
    });

    test('two registrations in two contexts keep separate counters under the same name', async () => {
      const a = app();
      for (const path of ['/one', '/two']) {
        await a.register(async (child) => {
          await child.register(sluice, { limit: 1, window: '1m' });
          child.get(path, ok);
        });
      }
      expect(await statuses(a, ['/one', '/two', '/one', '/two'])).toEqual([200, 200, 429, 429]);
      // Each names the route of the other context.
      expect(warnings.codes).toEqual(['ERR_SLUICE_UNLIMITED_ROUTES', 'ERR_SLUICE_UNLIMITED_ROUTES']);
    });
  });

  describe('bad route options fail when the route is added', () => {
    test('app.get throws SluiceConfigError naming the route', async () => {
      const a = app();
      await a.register(sluice, { limit: 5, window: '1m' });
      let error: unknown;
      try {
        a.get('/bad', { config: { rateLimit: { limit: -1 } } }, ok);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SluiceConfigError);
      expect(error).toMatchObject({ code: 'ERR_SLUICE_INVALID_LIMIT', option: 'config.rateLimit.limit' });
      expect((error as Error).message).toContain('GET /bad');
    });

    test.each([
      ['an unknown option', { limt: 5 }, 'ERR_SLUICE_UNKNOWN_OPTION'],
      ['a bad hook', { hook: 'onSend' }, 'ERR_SLUICE_INVALID_OPTION'],
      ['global in a route', { global: false }, 'ERR_SLUICE_UNKNOWN_OPTION'],
      [
        'limiter with policies',
        { limiter: createLimiter({ limit: 1, window: 1000 }), limit: 2 },
        'ERR_SLUICE_CONFLICTING_OPTIONS',
      ],
      ['true instead of an object', true, 'ERR_SLUICE_INVALID_OPTION'],
    ])('%s: ready() rejects for a route added in a plugin', async (_n, rateLimit, code) => {
      const a = app();
      await a.register(sluice, { limit: 5, window: '1m' });
      a.register(async (child) => {
        child.get('/bad', { config: { rateLimit: rateLimit as SluiceFastifyOptions } }, ok);
      });
      await expect(a.ready()).rejects.toMatchObject({ name: 'SluiceConfigError', code });
    });

    test('never on the first request: a good route is checked once and then only runs', async () => {
      const store = recording(new MemoryStore({ clock: alignedClock() }));
      const a = await limited({ global: false, store });
      a.get('/fine', { config: { rateLimit: { limit: 1, window: '1m' } } }, ok);
      await a.ready();
      expect(store.names).toEqual([]);
      expect(await statuses(a, ['/fine', '/fine'])).toEqual([200, 429]);
    });
  });
});

import { type Decision, MemoryStore, SluiceConfigError } from '@sluice/core';
import sluice, { type SluiceFastifyOptions } from '@sluice/fastify';
import type { FastifyInstance, FastifyServerOptions, InjectOptions } from 'fastify';
import { alignedClock, failingStore, frameworks, type MakeApp, recording } from './support.js';

describe.each(frameworks)('%s: every HTTP option', (_, makeApp: MakeApp) => {
  const apps: FastifyInstance[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  /** An app limited by `options` on a fixed clock, with `GET /` answering its `request.rateLimit`. */
  async function limited(options: SluiceFastifyOptions, server: FastifyServerOptions = {}) {
    const app = makeApp(server);
    apps.push(app);
    await app.register(sluice, { store: new MemoryStore({ clock: alignedClock() }), ...options });
    app.get('/', async (request) => ({ decision: request.rateLimit ?? null }));
    return app;
  }

  const get = (app: FastifyInstance, extra: Partial<InjectOptions> = {}) =>
    app.inject({ method: 'GET', url: '/', ...extra });

  async function statuses(app: FastifyInstance, requests: Partial<InjectOptions>[]): Promise<number[]> {
    const out: number[] = [];
    for (const extra of requests) out.push((await get(app, extra)).statusCode);
    return out;
  }

  describe('answers', () => {
    test('passes up to the limit with request.rateLimit set, then 429 problem+json', async () => {
      const app = await limited({ limit: 2, window: '1m', algorithm: 'fixed-window' });
      const first = await get(app);
      expect(first.statusCode).toBe(200);
      expect(first.json().decision).toMatchObject({
        allowed: true,
        limit: 2,
        remaining: 1,
        policy: '2-per-1m',
      });
      expect((await get(app)).statusCode).toBe(200);
      const denied = await get(app);
      expect(denied.statusCode).toBe(429);
      expect(denied.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(denied.headers['retry-after']).toBe('60');
      expect(denied.json()).toMatchObject({
        status: 429,
        title: 'Too Many Requests',
        policy: '2-per-1m',
        retryAfter: 60,
      });
      expect(typeof denied.json().detail).toBe('string');
    });

    test('statusCode replaces 429', async () => {
      const app = await limited({ limit: 1, window: '1m', statusCode: 418 });
      expect(await statuses(app, [{}, {}])).toEqual([200, 418]);
    });

    test('handler answers denied requests with the decision, status preset', async () => {
      const seen: Decision[] = [];
      const app = await limited({
        limit: 1,
        window: '1m',
        handler: (_request, reply, decision) => {
          seen.push(decision);
          reply.header('x-custom', 'yes').send({ slowDown: decision.retryAfterMs });
        },
      });
      await get(app);
      const denied = await get(app);
      expect(denied.statusCode).toBe(429);
      expect(denied.headers['x-custom']).toBe('yes');
      expect(denied.headers.ratelimit).toBeDefined();
      expect(denied.json()).toEqual({ slowDown: seen[0]!.retryAfterMs });
      expect(seen).toHaveLength(1);
      expect(seen[0]!.allowed).toBe(false);
    });

    test('a handler that throws goes to Fastify error handling', async () => {
      const app = await limited({
        limit: 1,
        window: '1m',
        handler: () => {
          throw new Error('handler broke');
        },
      });
      await get(app);
      const denied = await get(app);
      expect(denied.statusCode).toBeGreaterThanOrEqual(400);
      expect(denied.json().message).toBe('handler broke');
      expect((await get(app)).json().message).toBe('handler broke');
    });

    test('onStoreError deny: 503 with Retry-After 1 when the store fails', async () => {
      const app = await limited({ limit: 5, window: '1m', store: failingStore(), onStoreError: 'deny' });
      const answer = await get(app);
      expect(answer.statusCode).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(answer.json().status).toBe(503);
    });

    test('onStoreError allow: a failing store lets requests through', async () => {
      const app = await limited({ limit: 1, window: '1m', store: failingStore(), onStoreError: 'allow' });
      expect(await statuses(app, [{}, {}, {}])).toEqual([200, 200, 200]);
    });
  });

  describe('subjects', () => {
    /** The statuses of one request from each address in turn. */
    const fromEach = (app: FastifyInstance, addresses: string[]) =>
      statuses(
        app,
        addresses.map((remoteAddress) => ({ remoteAddress })),
      );

    test("'ip' is request.ip: clients are counted apart", async () => {
      const app = await limited({ limit: 1, window: '1m' });
      expect(await fromEach(app, ['203.0.113.1', '203.0.113.2', '203.0.113.1'])).toEqual([200, 200, 429]);
    });

    test('trustProxy off: a spoofed X-Forwarded-For does not change the subject', async () => {
      const app = await limited({ limit: 1, window: '1m' });
      const spoof = (ip: string) => ({ remoteAddress: '203.0.113.1', headers: { 'x-forwarded-for': ip } });
      expect(await statuses(app, [spoof('1.1.1.1'), spoof('2.2.2.2')])).toEqual([200, 429]);
    });

    test('trustProxy on: X-Forwarded-For is the client', async () => {
      const app = await limited({ limit: 1, window: '1m' }, { trustProxy: true });
      const via = (ip: string) => ({ remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': ip } });
      expect(await statuses(app, [via('1.1.1.1'), via('2.2.2.2'), via('1.1.1.1')])).toEqual([200, 200, 429]);
    });

    test('IPv6 addresses in one /64 share a limit; another /64 does not', async () => {
      const app = await limited({ limit: 1, window: '1m' });
      expect(await fromEach(app, ['2001:db8:1:2::1', '2001:db8:1:2:ffff::9', '2001:db8:1:3::1'])).toEqual([
        200, 429, 200,
      ]);
    });

    test('ipv6Subnet false: every IPv6 address is its own subject', async () => {
      const app = await limited({ limit: 1, window: '1m', ipv6Subnet: false });
      expect(await fromEach(app, ['2001:db8::1', '2001:db8::2'])).toEqual([200, 200]);
    });

    test('::ffff:1.2.3.4 and 1.2.3.4 share a limit', async () => {
      const app = await limited({ limit: 1, window: '1m' });
      expect(await fromEach(app, ['::ffff:1.2.3.4', '1.2.3.4'])).toEqual([200, 429]);
    });

    test("'api-key' from the x-api-key header, and from a query parameter", async () => {
      const header = await limited({ limit: 1, window: '1m', subject: 'api-key' });
      expect(
        await statuses(header, [
          { headers: { 'x-api-key': 'k1' } },
          { headers: { 'x-api-key': 'k2' } },
          { headers: { 'x-api-key': 'k1' } },
        ]),
      ).toEqual([200, 200, 429]);
      const query = await limited({ limit: 1, window: '1m', subject: 'api-key', apiKey: { query: 'key' } });
      expect(await statuses(query, [{ url: '/?key=a' }, { url: '/?key=b' }, { url: '/?key=a' }])).toEqual([
        200, 200, 429,
      ]);
    });

    test("'token' is the bearer token; verify turns credentials into one canonical subject", async () => {
      const token = await limited({ limit: 1, window: '1m', subject: 'token' });
      const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });
      expect(await statuses(token, [bearer('t1'), bearer('t2'), bearer('t1')])).toEqual([200, 200, 429]);
      const verified = await limited({
        limit: 1,
        window: '1m',
        subject: 'token',
        verify: async (credential) => (credential.startsWith('acct1-') ? 'acct1' : null),
      });
      expect(await statuses(verified, [bearer('acct1-a'), bearer('acct1-b')])).toEqual([200, 429]);
    });

    test('a function subject, and an array tried in order', async () => {
      const app = await limited({
        limit: 1,
        window: '1m',
        subject: [(request) => (request.headers['x-user'] as string | undefined) ?? undefined, 'ip'],
      });
      expect(
        await statuses(app, [
          { headers: { 'x-user': 'ann' } },
          { headers: { 'x-user': 'bob' } },
          {},
          { headers: { 'x-user': 'ann' } },
          {},
        ]),
      ).toEqual([200, 200, 200, 429, 429]);
    });

    test('rotating random unverified keys does not escape the IP limit behind them', async () => {
      const app = await limited({
        limit: 3,
        window: '1m',
        subject: ['api-key', 'ip'],
        verify: (key) => (key === 'real-key' ? 'customer-1' : null),
      });
      const random = Array.from({ length: 10 }, (_, i) => ({ headers: { 'x-api-key': `random-${i}` } }));
      const answers = await statuses(app, random);
      expect(answers.filter((s) => s === 200)).toHaveLength(3);
      expect((await get(app, { headers: { 'x-api-key': 'real-key' } })).statusCode).toBe(200);
    });
  });

  describe('hostile input', () => {
    test('a 64 kB API key is answered and counted, never echoed', async () => {
      const app = await limited({ limit: 1, window: '1m', subject: 'api-key', onDecision: () => {} });
      const huge = 'k'.repeat(64 * 1024);
      const first = await get(app, { headers: { 'x-api-key': huge } });
      expect(first.statusCode).toBe(200);
      const second = await get(app, { headers: { 'x-api-key': huge } });
      expect(second.statusCode).toBe(429);
      expect(second.body).not.toContain('kkkkkkkk');
      expect(JSON.stringify(second.headers)).not.toContain('kkkkkkkk');
    });

    test('a malformed Authorization header counts as no token: the IP limit applies', async () => {
      const app = await limited({ limit: 1, window: '1m', subject: 'token' });
      const bad = [
        'Bearer',
        'Basic Zm9vOmJhcg==',
        'Bearer a b c',
        'Bearer ###',
        `Bearer ${'%'.repeat(8192)}`,
      ];
      const answers = await statuses(
        app,
        bad.map((authorization) => ({ headers: { authorization } })),
      );
      expect(answers).toEqual([200, 429, 429, 429, 429]);
    });

    test('1,000 distinct X-Forwarded-For values with trustProxy off: one subject, bounded', async () => {
      const store = recording(new MemoryStore({ clock: alignedClock() }));
      const app = await limited({ limit: 5, window: '1m', store });
      const answers: number[] = [];
      for (let i = 0; i < 1000; i++) {
        const xff = `10.${(i >> 8) & 255}.${i & 255}.1, 198.51.100.${i % 250}`;
        answers.push((await get(app, { headers: { 'x-forwarded-for': xff } })).statusCode);
      }
      expect(answers.filter((s) => s === 200)).toHaveLength(5);
      expect(answers.filter((s) => s === 429)).toHaveLength(995);
    });
  });

  describe('cost, skip, allow and deny lists, ban', () => {
    test('cost as a number and as a function of the request', async () => {
      const fixed = await limited({ limit: 5, window: '1m', cost: 2 });
      expect(await statuses(fixed, [{}, {}, {}])).toEqual([200, 200, 429]);
      const perRequest = await limited({
        limit: 5,
        window: '1m',
        cost: (request) => (request.headers['x-heavy'] ? 5 : 1),
      });
      expect(await statuses(perRequest, [{}, { headers: { 'x-heavy': '1' } }, {}])).toEqual([200, 429, 200]);
    });

    test('skip: not limited, not counted, no headers, no request.rateLimit', async () => {
      const app = await limited({
        limit: 1,
        window: '1m',
        skip: (request) => request.headers['x-skip'] === '1',
      });
      const skipped = await get(app, { headers: { 'x-skip': '1' } });
      expect(skipped.statusCode).toBe(200);
      expect(skipped.headers.ratelimit).toBeUndefined();
      expect(skipped.json().decision).toBeNull();
      expect(await statuses(app, [{ headers: { 'x-skip': '1' } }, {}, {}])).toEqual([200, 200, 429]);
    });

    test('allowList by IP and by function: never limited', async () => {
      const byIp = await limited({ limit: 1, window: '1m', allowList: ['198.51.100.7'] });
      const trusted = { remoteAddress: '198.51.100.7' };
      expect(await statuses(byIp, [trusted, trusted, trusted, {}, {}])).toEqual([200, 200, 200, 200, 429]);
      const byFunction = await limited({
        limit: 1,
        window: '1m',
        subject: 'api-key',
        allowList: (_request, subject) => subject === 'internal',
      });
      const internal = { headers: { 'x-api-key': 'internal' } };
      expect(await statuses(byFunction, [internal, internal, internal])).toEqual([200, 200, 200]);
    });

    test('denyList: 403 problem+json, matched against the IP and the raw key', async () => {
      const app = await limited({
        limit: 5,
        window: '1m',
        subject: 'api-key',
        denyList: ['stolen-key', '192.0.2.9'],
      });
      const byKey = await get(app, { headers: { 'x-api-key': 'stolen-key' } });
      expect(byKey.statusCode).toBe(403);
      expect(byKey.headers['retry-after']).toBeUndefined();
      expect(byKey.json()).toMatchObject({ status: 403, title: 'Forbidden' });
      expect((await get(app, { remoteAddress: '192.0.2.9' })).statusCode).toBe(403);
      expect((await get(app, { headers: { 'x-api-key': 'good-key' } })).statusCode).toBe(200);
    });

    test('ban: 403 after repeated denials, until the ban ends', async () => {
      const clock = alignedClock();
      const app = await limited({
        store: new MemoryStore({ clock }),
        limit: 1,
        window: '1s',
        algorithm: 'fixed-window',
        ban: { after: 2, within: '1m', for: '10m' },
      });
      expect(await statuses(app, [{}, {}, {}, {}])).toEqual([200, 429, 429, 403]);
      clock.advance(5_000);
      const banned = await get(app);
      expect(banned.statusCode).toBe(403);
      expect(Number(banned.headers['retry-after'])).toBeGreaterThan(500);
    });
  });

  describe('reporting', () => {
    test('shadow: denied decisions are reported and passed on', async () => {
      const decisions: boolean[] = [];
      const app = await limited({
        limit: 1,
        window: '1m',
        shadow: true,
        onDecision: (_request, decision) => decisions.push(decision.allowed),
      });
      const answers = await Promise.all(
        [get(app), get(app), get(app)].map(async (r) => (await r).statusCode),
      );
      expect(answers).toEqual([200, 200, 200]);
      expect(decisions.sort()).toEqual([false, false, true]);
    });

    test('onDecision sees the request and every decision', async () => {
      const seen: [string | undefined, boolean][] = [];
      const app = await limited({
        limit: 1,
        window: '1m',
        onDecision: (request, decision) => seen.push([request.headers['x-id'] as string, decision.allowed]),
      });
      await get(app, { headers: { 'x-id': 'a' } });
      await get(app, { headers: { 'x-id': 'b' } });
      expect(seen).toEqual([
        ['a', true],
        ['b', false],
      ]);
    });
  });

  describe('refunds', () => {
    async function withStatusRoute(options: SluiceFastifyOptions) {
      const app = makeApp();
      apps.push(app);
      await app.register(sluice, { store: new MemoryStore({ clock: alignedClock() }), ...options });
      app.get('/status/:code', async (request, reply) => {
        reply.code(Number((request.params as { code: string }).code));
        return 'done';
      });
      return (code: number) =>
        app.inject({ method: 'GET', url: `/status/${code}` }).then((r) => r.statusCode);
    }

    test('skipFailedRequests: responses >= 400 give their charge back', async () => {
      const call = await withStatusRoute({ limit: 2, window: '1m', skipFailedRequests: true });
      for (let i = 0; i < 5; i++) expect(await call(500)).toBe(500);
      expect([await call(200), await call(200), await call(200)]).toEqual([200, 200, 429]);
    });

    test('skipSuccessfulRequests: responses < 400 give their charge back', async () => {
      const call = await withStatusRoute({ limit: 2, window: '1m', skipSuccessfulRequests: true });
      for (let i = 0; i < 5; i++) expect(await call(200)).toBe(200);
      expect([await call(404), await call(404), await call(404)]).toEqual([404, 404, 429]);
    });
  });

  describe('errors of user callbacks', () => {
    const broke = (what: string) => () => {
      throw new Error(`${what} broke`);
    };
    const brokeAsync = (what: string) => async () => broke(what)();
    test.each([
      ['subject', { subject: broke('subject') }],
      ['subject (async)', { subject: brokeAsync('subject') }],
      ['verify', { subject: 'api-key', verify: broke('verify') }],
      ['cost', { cost: broke('cost') }],
      ['skip (async)', { skip: brokeAsync('skip') }],
    ] as [string, SluiceFastifyOptions][])(
      '%s: Fastify error handling answers, the app lives on',
      async (_n, extra) => {
        const app = await limited({ limit: 5, window: '1m', ...extra });
        const answer = await get(app, { headers: { 'x-api-key': 'k' } });
        expect(answer.statusCode).toBe(500);
        expect(answer.json().message).toMatch(/broke/);
        expect((await get(app, { headers: { 'x-api-key': 'k' } })).statusCode).toBe(500);
      },
    );
  });

  describe('hook', () => {
    /** An app whose authentication runs as a preHandler hook and puts the user on the request. */
    async function authenticated(hook: 'onRequest' | 'preHandler' | undefined) {
      const app = makeApp();
      apps.push(app);
      app.decorateRequest('user', null);
      app.addHook('preHandler', async (request) => {
        (request as unknown as { user: string | null }).user = (request.headers['x-user'] as string) ?? null;
      });
      await app.register(sluice, {
        limit: 1,
        window: '1m',
        store: new MemoryStore({ clock: alignedClock() }),
        subject: (request) => (request as unknown as { user: string | null }).user ?? undefined,
        ...(hook === undefined ? {} : { hook }),
      });
      app.get('/', async () => 'ok');
      const as = (user: string) => ({ headers: { 'x-user': user } });
      return statuses(app, [as('ann'), as('bob'), as('ann')]);
    }

    test("'preHandler': the subject comes from authentication in an earlier hook", async () => {
      expect(await authenticated('preHandler')).toEqual([200, 200, 429]);
    });

    test("default 'onRequest': decided before authentication, so by IP", async () => {
      expect(await authenticated(undefined)).toEqual([200, 429, 429]);
    });
  });

  describe('bad options fail register with SluiceConfigError', () => {
    test.each([
      ['a bad limit', { limit: 0, window: '1m' }, 'ERR_SLUICE_INVALID_LIMIT'],
      ['an unknown option', { limit: 1, window: '1m', max: 5 }, 'ERR_SLUICE_UNKNOWN_OPTION'],
      ['a bad duration', { limit: 1, window: 'soon' }, 'ERR_SLUICE_INVALID_DURATION'],
      ['a bad hook', { limit: 1, window: '1m', hook: 'onSend' }, 'ERR_SLUICE_INVALID_OPTION'],
      ['a bad global', { limit: 1, window: '1m', global: 'yes' }, 'ERR_SLUICE_INVALID_OPTION'],
      ['no policy', {}, 'ERR_SLUICE_NO_POLICY'],
      [
        'global: false with a bad header mode',
        { global: false, headers: 'draft-99' },
        'ERR_SLUICE_INVALID_OPTION',
      ],
      [
        'global: false with an unknown option',
        { global: false, limit: 1, windowMs: 5 },
        'ERR_SLUICE_UNKNOWN_OPTION',
      ],
    ])('%s', async (_n, options, code) => {
      const app = makeApp();
      apps.push(app);
      const error = await Promise.resolve(app.register(sluice, options as SluiceFastifyOptions)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SluiceConfigError);
      expect(error).toMatchObject({ code });
    });

    test('global: false with no policy of its own is fine: the routes bring theirs', async () => {
      const app = makeApp();
      apps.push(app);
      await app.register(sluice, { global: false, headers: 'draft-7' });
      app.get('/', { config: { rateLimit: { limit: 1, window: '1m' } } }, async () => 'ok');
      expect(await statuses(app, [{}, {}])).toEqual([200, 429]);
      expect((await get(app)).headers.ratelimit).toMatch(/^limit=1, remaining=0/);
    });
  });
});

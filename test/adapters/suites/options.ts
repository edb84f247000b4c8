import request from 'supertest';
import { stillStore } from '../../support/clock.js';
import { expectOnlyWarnings } from '../../support/warnings.js';
import type { Framework, SharedOptions } from '../framework.js';
import { get, serving, statuses, tick } from '../support.js';

/** The per-request options of the contract (API.md, "HTTP options"), the same on every framework. */
export function optionsPerRequest(framework: Framework): void {
  // Credentials without verify are what some cases send: the warning is expected.
  expectOnlyWarnings('ERR_SLUICE_UNVERIFIED_CREDENTIAL');
  const start = serving(framework);
  const header = (req: unknown, name: string) => framework.header(req, name);

  test('skip: never limited, nothing counted, no headers, no decision on the request', async () => {
    const app = await start({ limit: 1, window: '1m', skip: (req) => header(req, 'x-free') === '1' });
    for (let i = 0; i < 3; i++) {
      const res = await get(app, '/', { 'x-free': '1' });
      expect(res.status).toBe(200);
      expect(res.headers.ratelimit).toBeUndefined();
      expect(res.body.remaining).toBeNull();
    }
    expect(await statuses(app, 2)).toEqual([200, 429]);
  });

  test('async skip is awaited', async () => {
    const app = await start({ limit: 1, window: '1m', skip: async () => true });
    expect(await statuses(app, 3)).toEqual([200, 200, 200]);
  });

  test('allowList: IP strings and ranges (the loopback address in any spelling)', async () => {
    const app = await start({ limit: 1, window: '1m', allowList: ['127.0.0.1', '::1'] });
    expect(await statuses(app, 3)).toEqual([200, 200, 200]);
    const range = await start({ limit: 1, window: '1m', allowList: ['127.0.0.0/8'] });
    expect(await statuses(range, 3)).toEqual([200, 200, 200]);
  });

  test('allowList: a function of the request and the subject; a verified subject', async () => {
    const byFn = await start({
      limit: 1,
      window: '1m',
      subject: 'api-key',
      allowList: (req, subject) => header(req, 'x-internal') === 'yes' || subject === 'partner',
    });
    for (let i = 0; i < 3; i++) {
      expect((await get(byFn, '/', { 'x-internal': 'yes' })).status).toBe(200);
      expect((await get(byFn, '/', { 'x-api-key': 'partner' })).status).toBe(200);
    }
    expect((await get(byFn, '/', { 'x-api-key': 'other' })).status).toBe(200);
    expect((await get(byFn, '/', { 'x-api-key': 'other' })).status).toBe(429);
    const verified = await start({
      limit: 1,
      window: '1m',
      subject: 'api-key',
      verify: (key) => (key.startsWith('acme-') ? 'acme' : null),
      allowList: ['acme'],
    });
    for (let i = 0; i < 3; i++) {
      expect((await get(verified, '/', { 'x-api-key': `acme-${i}` })).body.remaining).toBeNull();
    }
  });

  test('cost: a number and a function of the request', async () => {
    const fixed = await start({ limit: 10, window: '1m', cost: 4 });
    expect(await statuses(fixed, 3)).toEqual([200, 200, 429]);
    const bySize = await start({
      limit: 10,
      window: '1m',
      cost: (req) => Number(header(req, 'x-units') ?? 1),
    });
    expect((await get(bySize, '/', { 'x-units': '6' })).body.remaining).toBe(4);
  });

  test('onDecision: every decision, with the request', async () => {
    const seen: [boolean, string | undefined][] = [];
    const app = await start({
      limit: 1,
      window: '1m',
      onDecision: (req, d) => seen.push([d.allowed, header(req, 'x-n')]),
    });
    for (const n of ['1', '2', '3']) await get(app, '/', { 'x-n': n });
    expect(seen).toEqual([
      [true, '1'],
      [false, '2'],
      [false, '3'],
    ]);
  });

  test('shadow: decides, sets headers and reports, never blocks (not even a ban)', async () => {
    const seen: boolean[] = [];
    const app = await start({
      limit: 1,
      window: '1m',
      shadow: true,
      ban: { after: 1, for: '1h' },
      onDecision: (_req, d) => seen.push(d.allowed),
    });
    const res = await Promise.all([get(app), get(app), get(app)]);
    expect(res.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(seen.filter((a) => !a).length).toBeGreaterThanOrEqual(2);
    expect(res.some((r) => r.headers.ratelimit !== undefined)).toBe(true);
  });

  test('skipFailedRequests: responses >= 400 give their charge back', async () => {
    const app = await start({
      limit: 2,
      window: '1m',
      algorithm: 'fixed-window',
      skipFailedRequests: true,
      store: stillStore(), // a window that rolled over midway would start the count again
    });
    for (let i = 0; i < 5; i++) expect((await get(app, '/fail')).status).toBe(500);
    await tick(10);
    expect(await statuses(app, 3, '/ok')).toEqual([200, 200, 429]);
  });

  test('skipSuccessfulRequests: responses < 400 give their charge back', async () => {
    const app = await start({
      limit: 2,
      window: '1m',
      algorithm: 'fixed-window',
      skipSuccessfulRequests: true,
      store: stillStore(),
    });
    const login = async (pw: string) => {
      const { status } = await request(app.url).post(`/login?pw=${pw}`);
      await tick(5);
      return status;
    };
    for (let i = 0; i < 5; i++) expect(await login('right')).toBe(200);
    expect(await login('wrong')).toBe(401);
    expect(await login('wrong')).toBe(401);
    expect(await login('right')).toBe(429);
  });

  describe('errors of user callbacks go to the framework error handling, never crash or hang', () => {
    const boom = () => {
      throw new Error('callback failed');
    };
    test.each<[string, SharedOptions]>([
      ['subject', { subject: boom }],
      ['async subject', { subject: async () => Promise.reject(new Error('callback failed')) }],
      ['verify', { subject: 'api-key', verify: boom }],
      ['cost', { cost: boom }],
      ['skip', { skip: boom }],
      ['async skip', { skip: async () => boom() }],
      ['allowList', { allowList: boom }],
      ['denyList', { denyList: boom }],
      ['onDecision', { onDecision: boom }],
    ])('%s', async (_name, options) => {
      const app = await start({ limit: 1, window: '1m', ...options });
      for (let i = 0; i < 2; i++) {
        const res = await get(app, '/', { 'x-api-key': 'k' });
        expect(res.status).toBe(500);
        expect(res.body).toEqual({ error: 'callback failed' });
      }
    });

    test('a cost function returning nonsense is an error too', async () => {
      const app = await start({ limit: 1, window: '1m', cost: () => -1 });
      const res = await get(app);
      expect(res.status).toBe(500);
      expect(res.body.error).toMatch(/cost/);
    });
  });
}

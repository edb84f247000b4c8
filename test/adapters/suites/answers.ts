import { type Decision, MemoryStore } from '@sluice/core';
import { manualClock } from '@sluice/core/testing';
import { expectOnlyWarnings, recordWarnings } from '../../support/warnings.js';
import type { Framework } from '../framework.js';
import { failingStore, get, serving, statuses } from '../support.js';

/** The answers of the contract (API.md, "Responses"), the same on every framework. */
export function answers(framework: Framework): void {
  // A failing store and an unverified credential are answers tested here: their warnings are expected.
  expectOnlyWarnings('ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_UNVERIFIED_CREDENTIAL');
  const start = serving(framework);

  test('passes up to the limit with the decision on the request, then 429 problem+json', async () => {
    const app = await start({
      limit: 2,
      window: '1m',
      algorithm: 'fixed-window',
      store: new MemoryStore({ clock: () => 1_699_920_000_000 }),
    });
    const first = await get(app);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ remaining: 1, delayMs: null });
    expect(first.headers.ratelimit).toBe('"2-per-1m";r=1;t=60');
    expect(first.headers['retry-after']).toBeUndefined();
    expect((await get(app)).status).toBe(200);
    const denied = await get(app);
    expect(denied.status).toBe(429);
    expect(denied.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(denied.headers['retry-after']).toBe('60');
    expect(denied.headers.ratelimit).toBe('"2-per-1m";r=0;t=60');
    expect(JSON.parse(denied.text)).toEqual({
      status: 429,
      title: 'Too Many Requests',
      detail: expect.stringContaining('"2-per-1m"'),
      policy: '2-per-1m',
      retryAfter: 60,
    });
  });

  test('403 for denyList (no Retry-After), matched on the IP or the raw key', async () => {
    const app = await start({ limit: 5, window: '1m', subject: ['api-key', 'ip'], denyList: ['stolen-key'] });
    const res = await get(app, '/', { 'x-api-key': 'stolen-key' });
    expect(res.status).toBe(403);
    expect(res.headers['retry-after']).toBeUndefined();
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(res.text)).toMatchObject({ status: 403, policy: 'deny-list' });
    expect((await get(app, '/', { 'x-api-key': 'fine' })).status).toBe(200);
    const byIp = await start({ limit: 5, window: '1m', denyList: ['127.0.0.0/8'] });
    expect((await get(byIp)).status).toBe(403);
  });

  test('403 for a ban with Retry-After until it ends', async () => {
    const app = await start({ limit: 1, window: '1m', ban: { after: 2, for: '2h' } });
    expect(await statuses(app, 3)).toEqual([200, 429, 429]);
    const res = await get(app);
    expect(res.status).toBe(403);
    expect(res.headers['retry-after']).toBe('7200');
    expect(JSON.parse(res.text)).toMatchObject({ status: 403, policy: 'ban', retryAfter: 7200 });
  });

  // 6cc09fa answered the refusal that starts a ban with the policy's Retry-After (60 here): a client
  // that waited that long met a 403 for the rest of the ban (API.md r3).
  test("the refusal that starts a ban stays a 429 with Retry-After to the ban's end", async () => {
    const onDecision = jest.fn();
    const app = await start({ limit: 1, window: '1m', ban: { after: 3, for: '2h' }, onDecision });
    expect(await statuses(app, 2)).toEqual([200, 429]);
    expect(Number((await get(app)).headers['retry-after'])).toBeLessThan(7200);
    const starts = await get(app);
    expect(starts.status).toBe(429);
    expect(starts.headers['retry-after']).toBe('7200');
    // Its RateLimit says the same: a client trusting `t` came back at the window's end to a 403
    // (review 3 of #28, on 407aab6: `t=37` beside `Retry-After: 600`).
    expect(starts.headers.ratelimit).toMatch(/;r=0;t=7200$/);
    expect(JSON.parse(starts.text)).toMatchObject({ status: 429, retryAfter: 7200 });
    expect(onDecision.mock.calls.map(([, d]) => d.retryAfterMs)[3]).toBe(7_200_000);
    expect((await get(app)).status).toBe(403);
  });

  test('a ban outlasts the limit that started it', async () => {
    const clock = manualClock(1_699_920_000_000);
    const app = await start({
      store: new MemoryStore({ clock }),
      limit: 1,
      window: '1s',
      algorithm: 'fixed-window',
      ban: { after: 2, within: '1m', for: '10m' },
    });
    expect(await statuses(app, 4)).toEqual([200, 429, 429, 403]);
    clock.advance(5_000); // the 1 s window is long over
    const banned = await get(app);
    expect(banned.status).toBe(403);
    expect(Number(banned.headers['retry-after'])).toBeGreaterThan(500);
  });

  test('503 with Retry-After: 1 when the store fails and onStoreError is deny', async () => {
    const onDecision = jest.fn();
    const app = await start({
      limit: 5,
      window: '1m',
      store: failingStore(),
      onStoreError: 'deny',
      onDecision,
    });
    const res = await get(app);
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(res.text)).toMatchObject({ status: 503, title: 'Service Unavailable', retryAfter: 1 });
    expect(onDecision.mock.calls[0]![1]).toMatchObject({
      allowed: false,
      reason: 'store-error',
      degraded: true,
    });
  });

  test('onStoreError allow passes requests on when the store fails', async () => {
    const app = await start({ limit: 1, window: '1m', store: failingStore(), onStoreError: 'allow' });
    expect(await statuses(app, 3)).toEqual([200, 200, 200]);
  });

  test('statusCode alone changes the status of the problem body', async () => {
    const app = await start({ limit: 1, window: '1m', statusCode: 418 });
    await get(app);
    const res = await get(app);
    expect(res.status).toBe(418);
    expect(JSON.parse(res.text).status).toBe(418);
  });

  test('handler answers a refusal, status and headers already set, with the decision on the request', async () => {
    const seen: Decision[] = [];
    const handler = framework.answer((decision, onRequest) => {
      seen.push(decision);
      return { slowDown: decision.policy, reason: decision.reason, same: onRequest === decision };
    });
    const app = await start({ limit: 1, window: '1m', statusCode: 418, handler });
    await get(app);
    const res = await get(app);
    expect(res.status).toBe(418);
    expect(res.body).toEqual({ slowDown: '1-per-1m', reason: 'limit', same: true });
    expect(res.headers['retry-after']).toBeDefined();
    expect(res.headers.ratelimit).toMatch(/^"1-per-1m";r=0;t=\d+$/);
    expect(seen).toHaveLength(1);
    // 403 and 503 too: test/regressions/handler-every-refusal.test.ts
  });

  test('a handler that throws goes to the error handler', async () => {
    const handler = () => {
      throw new Error('handler broke');
    };
    const app = await start({ limit: 1, window: '1m', handler });
    await get(app);
    const res = await get(app);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'handler broke' });
  });

  // 5fcb38f left every refusal hanging (Express, Fastify, Nest) or answered it 500 (Hono) when the
  // handler returned a body, errorResponseBuilder's shape, and sent nothing (API.md r3).
  describe('a handler that returns without answering', () => {
    const warnings = recordWarnings();
    test.each([
      ['returns a body', () => ({ error: 'slow down' })],
      ['resolves a body', async () => ({ error: 'slow down' })],
    ])('%s: Sluice sends its own refusal, and warns once', async (_, handler) => {
      const app = await start({ limit: 1, window: '1m', handler });
      await get(app);
      for (let i = 0; i < 2; i++) {
        const res = await get(app).timeout(3000);
        expect(res.status).toBe(429);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(JSON.parse(res.text)).toMatchObject({ status: 429, policy: '1-per-1m' });
      }
      expect(warnings.codes).toEqual(['ERR_SLUICE_HANDLER_NO_ANSWER']);
    });
  });
}

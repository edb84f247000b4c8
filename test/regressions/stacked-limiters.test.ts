import { MemoryStore } from '@sluice/core';
import { type RateLimiterOptions, rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import request from 'supertest';
import { expressVersions } from '../../packages/express/test/support.js';
import { frameworks } from '../../packages/fastify/test/frameworks.js';

// An app-wide limiter and a route's own sent only the last one's RateLimit fields, hiding the other
// limit (API.md r2: draft-10 lists every policy of every limiter that decided; the single-policy drafts
// describe the binding policy over all of them). Failed on 13f5928.

const appWide = (extra: RateLimiterOptions = {}): RateLimiterOptions => ({
  name: 'app',
  policies: [{ name: 'app', limit: 100, window: '1m', algorithm: 'fixed-window' }],
  store: new MemoryStore({ clock: () => 1_700_000_040_000 }),
  ...extra,
});
const route = (extra: RateLimiterOptions = {}): RateLimiterOptions => ({
  name: 'route',
  policies: [{ name: 'route', limit: 5, window: '1m', algorithm: 'fixed-window' }],
  store: new MemoryStore({ clock: () => 1_700_000_040_000 }),
  ...extra,
});

type Headers = Record<string, string | undefined>;
type Run = (first: RateLimiterOptions, second: RateLimiterOptions) => Promise<Headers>;

const onExpress: Run = async (first, second) => {
  const app = expressVersions[0]![1]();
  app.use(rateLimiter(first));
  app.get('/', rateLimiter(second), (_req, res) => {
    res.send('ok');
  });
  return (await request(app).get('/')).headers as Headers;
};

const onFastify: Run = async (first, second) => {
  const app = frameworks[0]![1]();
  await app.register(sluice, first as never);
  await app.register(sluice, second as never);
  app.get('/', async () => 'ok');
  const answer = await app.inject({ url: '/' });
  await app.close();
  return answer.headers as Headers;
};

describe.each([
  ['Express', onExpress],
  ['Fastify', onFastify],
])('%s: two limiters on one request', (_name, run) => {
  it('draft-10 lists the policies of both, in order', async () => {
    const headers = await run(appWide(), route());
    expect(headers['ratelimit-policy']).toBe('"app";q=100;w=60, "route";q=5;w=60');
    expect(headers.ratelimit).toBe('"app";r=99;t=60, "route";r=4;t=60');
  });

  it('draft-7 and legacy fields describe the binding policy over both (the fewest remaining)', async () => {
    const mode = { headers: 'draft-7', legacyHeaders: true } as const;
    const headers = await run(route(mode), appWide(mode));
    expect(headers['ratelimit-policy']).toBe('5;w=60');
    expect(headers.ratelimit).toBe('limit=5, remaining=4, reset=60');
    expect(headers['x-ratelimit-remaining']).toBe('4');
  });
});

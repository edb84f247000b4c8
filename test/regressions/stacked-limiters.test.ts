import { MemoryStore } from '@sluice/core';
import type { SharedOptions } from '../adapters/frameworks.js';
import { eachFramework } from '../adapters/frameworks.js';
import { get, serving } from '../adapters/support.js';

// An app-wide limiter and a route's own sent only the last one's RateLimit fields, hiding the other
// limit (API.md r2: draft-10 lists every policy of every limiter that decided; the single-policy drafts
// describe the binding policy over all of them). Failed on 13f5928.

const appWide = (extra: SharedOptions = {}): SharedOptions => ({
  name: 'app',
  policies: [{ name: 'app', limit: 100, window: '1m', algorithm: 'fixed-window' }],
  store: new MemoryStore({ clock: () => 1_700_000_040_000 }),
  ...extra,
});
const route = (extra: SharedOptions = {}): SharedOptions => ({
  name: 'route',
  policies: [{ name: 'route', limit: 5, window: '1m', algorithm: 'fixed-window' }],
  store: new MemoryStore({ clock: () => 1_700_000_040_000 }),
  ...extra,
});

describe.each(eachFramework)('%s: two limiters on one request', (_name, framework) => {
  const start = serving(framework);
  const headersOf = async (first: SharedOptions, second: SharedOptions) =>
    (await get(await start(first, { second }), '/ok')).headers;

  it('draft-10 lists the policies of both, in order', async () => {
    const headers = await headersOf(appWide(), route());
    expect(headers['ratelimit-policy']).toBe('"app";q=100;w=60, "route";q=5;w=60');
    expect(headers.ratelimit).toBe('"app";r=99;t=60, "route";r=4;t=60');
  });

  it('draft-7 and legacy fields describe the binding policy over both (the fewest remaining)', async () => {
    const mode = { headers: 'draft-7', legacyHeaders: true } as const;
    const headers = await headersOf(route(mode), appWide(mode));
    expect(headers['ratelimit-policy']).toBe('5;w=60');
    expect(headers.ratelimit).toBe('limit=5, remaining=4, reset=60');
    expect(headers['x-ratelimit-remaining']).toBe('4');
  });

  it('the decision on the request is the last limiter’s', async () => {
    const app = await start(appWide(), { second: route() });
    expect((await get(app)).body.remaining).toBe(4);
  });
});

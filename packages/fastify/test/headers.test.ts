import { MemoryStore, RedisStore, type Store } from '@sluice/core';
import sluice, { type SluiceFastifyOptions } from '@sluice/fastify';
import { closeClients, standaloneClient, uniquePrefix } from '../../core/test/redis/clients.js';
import { HEADER_CASES_NOW, type HeaderCase, headerCases } from '../../../test/fixtures/header-cases.js';
import { describeRedis, sharedRedis } from '../../../test/support/redis.js';
import { frameworks, type MakeApp } from './frameworks.js';

const cases = headerCases.map((c) => [c.title, c] as const);

/** Runs one case of the shared table: `c.requests` identical requests, the last answer checked. */
async function check(makeApp: MakeApp, c: HeaderCase, store: Store, extra: SluiceFastifyOptions = {}) {
  const app = makeApp();
  try {
    await app.register(sluice, { ...c.options, ...extra, store } as SluiceFastifyOptions);
    app.get('/', async () => 'ok');
    let last: Awaited<ReturnType<typeof app.inject>> | undefined;
    for (let i = 0; i < c.requests; i++) last = await app.inject({ method: 'GET', url: '/' });
    expect(last!.statusCode).toBe(c.status);
    for (const [name, expected] of Object.entries(c.headers)) {
      const actual = last!.headers[name];
      if (expected === null) expect(actual).toBeUndefined();
      else if (expected instanceof RegExp) expect(String(actual)).toMatch(expected);
      else expect(actual).toBe(expected);
    }
    if (c.body !== undefined) expect(last!.json()).toMatchObject(c.body);
  } finally {
    await app.close();
  }
}

describe.each(frameworks)('header strings on %s, memory store (the shared table)', (_, makeApp) => {
  test.each(cases)('%s', (_title, c) => check(makeApp, c, new MemoryStore({ clock: () => HEADER_CASES_NOW })));
});

// The same strings when every decision is a promise (a remote store): the adapter's asynchronous path.
describeRedis('header strings, Redis store (the shared table)', () => {
  let url: string;
  beforeAll(async () => {
    url = await sharedRedis();
  });
  afterAll(closeClients);

  // Not the ban case: on a remote store core records a strike after answering (a second round trip),
  // so the very next request may still be checked before the ban exists.
  const remoteCases = cases.filter(([, c]) => c.options.ban === undefined);
  describe.each(frameworks)('%s', (_, makeApp) => {
    test.each(remoteCases)('%s', (_title, c) => {
      const store = new RedisStore({ client: standaloneClient(url), clock: () => HEADER_CASES_NOW });
      return check(makeApp, c, store, { prefix: uniquePrefix('fastify-headers') });
    });
  });
});

import { RedisStore, type Store } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import type { Express } from 'express';
import request from 'supertest';
import { HEADER_CASES_NOW, headerCases } from '../../../test/fixtures/header-cases.js';
import { describeRedis, suiteRedis } from '../../../test/support/redis.js';
import { closeClients, standaloneClient, uniquePrefix } from '../../core/test/redis/clients.js';
import { checkHeaderCase, expressVersions, tick, until } from './support.js';

/**
 * Two apps, each with its own ioredis client and RedisStore on one Redis: two processes as far as
 * Sluice can tell. What one counts, bans or leases, the other sees.
 */
describeRedis('Express on a Redis store', () => {
  let redis: Awaited<ReturnType<typeof suiteRedis>>;
  beforeAll(async () => {
    redis = await suiteRedis();
  });
  afterAll(async () => {
    await closeClients();
    await redis.stop();
  });

  function redisStore(clock?: () => number): RedisStore {
    return new RedisStore({ client: standaloneClient(redis.url, { autoPipelining: true }), clock });
  }

  /**
   * A RedisStore whose answers arrive `ms` after Redis decided, as across a network: a write that
   * nobody waits for is still in flight when the next request comes.
   */
  function distantStore(ms: number): Store {
    const store = redisStore();
    return {
      local: false,
      consume: async (call) => {
        const outcome = await store.consume(call);
        await tick(ms);
        return outcome;
      },
      refund: (call) => store.refund(call),
      reset: (limiter, subject) => store.reset(limiter, subject),
    };
  }

  describe.each(expressVersions)('%s', (_, makeApp) => {
    // The ban case too: a denial's strike is in Redis before it is answered, so the next request is banned.
    test.each(headerCases.map((c) => [c.title, c] as const))('the shared header table: %s', (_title, c) =>
      checkHeaderCase(
        makeApp,
        c,
        redisStore(() => HEADER_CASES_NOW),
        // A generous timeout: on a loaded machine a call past 250 ms would be decided in process.
        { prefix: uniquePrefix('express'), storeTimeout: '5s' },
      ),
    );

    /** What `/slow` waits for: it has `entered` once it holds its lease, and answers on `open()`. */
    let gate: { entered: boolean; open: () => void; opened: Promise<void> };
    beforeEach(() => {
      let open = () => {};
      const opened = new Promise<void>((resolve) => {
        open = resolve;
      });
      gate = { entered: false, open, opened };
    });

    /** Two "processes" with the same options on one Redis, under a prefix of their own. */
    function twoApps(
      options: Parameters<typeof rateLimiter>[0],
      store: () => Store = redisStore,
    ): [Express, Express] {
      const prefix = uniquePrefix('express');
      const make = () => {
        const app = makeApp();
        app.use(rateLimiter({ storeTimeout: '5s', ...options, prefix, store: store() }));
        app.get('/', (req, res) => {
          res.json({ remaining: req.rateLimit?.remaining });
        });
        app.get('/slow', (_req, res) => {
          gate.entered = true;
          gate.opened.then(() => res.send('done'));
        });
        return app;
      };
      return [make(), make()];
    }

    test('two processes share one limit, with the same headers and answers', async () => {
      // A still clock: a fixed window that rolled over between two requests would start the count again.
      const [a, b] = twoApps({ limit: 3, window: '1m', algorithm: 'fixed-window' }, () =>
        redisStore(() => HEADER_CASES_NOW),
      );
      expect((await request(a).get('/')).body.remaining).toBe(2);
      expect((await request(b).get('/')).body.remaining).toBe(1);
      expect((await request(a).get('/')).body.remaining).toBe(0);
      const denied = await request(b).get('/');
      expect(denied.status).toBe(429);
      expect(denied.headers['content-type']).toBe('application/problem+json');
      expect(denied.headers.ratelimit).toMatch(/^"3-per-1m";r=0;t=\d+$/);
      expect(Number(denied.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    });

    test('a ban started in one process is enforced by the other, from its very next request', async () => {
      const [a, b] = twoApps({ limit: 1, window: '1m', ban: { after: 2, for: '1h' } }, () =>
        distantStore(40),
      );
      expect((await request(a).get('/')).status).toBe(200);
      expect((await request(b).get('/')).status).toBe(429);
      expect((await request(a).get('/')).status).toBe(429);
      const banned = await request(b).get('/');
      expect(banned.status).toBe(403);
      expect(Number(banned.headers['retry-after'])).toBeGreaterThan(3590);
      expect(JSON.parse(banned.text)).toMatchObject({ status: 403, policy: 'ban' });
    });

    test('concurrency leases are shared, and released when the response finishes', async () => {
      const [a, b] = twoApps({ limit: 1, window: '1m', algorithm: 'concurrency' });
      const slowDone = request(a)
        .get('/slow')
        .then((r) => r.status);
      await until(() => gate.entered);
      expect((await request(b).get('/')).status).toBe(429);
      gate.open();
      expect(await slowDone).toBe(200);
      // The release is sent when the response finishes: the other process finds the slot free.
      await until(async () => (await request(b).get('/')).status === 200);
    });
  });
});

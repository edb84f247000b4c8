import { RedisStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import type { Express } from 'express';
import Redis from 'ioredis';
import request from 'supertest';
import { describeRedis, sharedRedis } from '../../../test/support/redis.js';
import { expressVersions, tick } from './support.js';

/**
 * Two apps, each with its own ioredis client and RedisStore on one Redis: two processes as far as
 * Sluice can tell. What one counts, bans or leases, the other sees.
 */
describeRedis('Express on a Redis store', () => {
  let url: string;
  const clients: Redis[] = [];
  let run = 0;

  beforeAll(async () => {
    url = await sharedRedis();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
  });

  function redisStore(): RedisStore {
    const client = new Redis(url, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
    clients.push(client);
    return new RedisStore({ client });
  }

  describe.each(expressVersions)('%s', (_, makeApp) => {
    /** Two "processes" with the same options on one Redis, under a prefix of their own. */
    function twoApps(options: Parameters<typeof rateLimiter>[0]): [Express, Express] {
      const prefix = `t-express-${process.pid}-${Date.now().toString(36)}-${++run}`;
      const make = () => {
        const app = makeApp();
        app.use(rateLimiter({ ...options, prefix, store: redisStore() }));
        app.get('/', (req, res) => {
          res.json({ remaining: req.rateLimit?.remaining });
        });
        app.get('/slow', (_req, res) => {
          setTimeout(() => res.send('done'), 150);
        });
        return app;
      };
      return [make(), make()];
    }

    test('two processes share one limit, with the same headers and answers', async () => {
      const [a, b] = twoApps({ limit: 3, window: '1m', algorithm: 'fixed-window' });
      expect((await request(a).get('/')).body.remaining).toBe(2);
      expect((await request(b).get('/')).body.remaining).toBe(1);
      expect((await request(a).get('/')).body.remaining).toBe(0);
      const denied = await request(b).get('/');
      expect(denied.status).toBe(429);
      expect(denied.headers['content-type']).toBe('application/problem+json');
      expect(denied.headers.ratelimit).toMatch(/^"3-per-1m";r=0;t=\d+$/);
      expect(Number(denied.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    });

    test('a ban started in one process is enforced by the other', async () => {
      const [a, b] = twoApps({ limit: 1, window: '1m', ban: { after: 2, for: '1h' } });
      expect((await request(a).get('/')).status).toBe(200);
      expect((await request(b).get('/')).status).toBe(429);
      expect((await request(a).get('/')).status).toBe(429);
      await tick(50); // the strike is counted after the answer
      const banned = await request(b).get('/');
      expect(banned.status).toBe(403);
      expect(Number(banned.headers['retry-after'])).toBeGreaterThan(3590);
      expect(JSON.parse(banned.text)).toMatchObject({ status: 403, policy: 'ban' });
    });

    test('concurrency leases are shared, and released when the response finishes', async () => {
      const [a, b] = twoApps({ limit: 1, window: '1m', algorithm: 'concurrency' });
      const slow = request(a).get('/slow');
      const slowDone = slow.then((r) => r.status);
      await tick(60);
      expect((await request(b).get('/')).status).toBe(429);
      expect(await slowDone).toBe(200);
      await tick(50);
      expect((await request(b).get('/')).status).toBe(200);
    });
  });
});

import { type LimiterOptions, MemoryStore, RedisStore, type Store } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import type { Cluster, Redis } from 'ioredis';
import request from 'supertest';
import {
  closeClients,
  clusterClient,
  standaloneClient,
  uniquePrefix,
} from '../../packages/core/test/redis/clients.js';
import { expressVersions } from '../../packages/express/test/support.js';
import { describeRedis, sharedCluster, sharedRedis } from '../support/redis.js';

// `reset(subject)` left the ban and its strikes in place, and nothing else could lift them
// (API.md r2: reset also lifts a ban). Failed on 13f5928.

async function banned(store: Store, prefix: string, denyCacheMs?: number) {
  // storeTimeout: past the default 250 ms on a loaded machine, a Redis call was decided in process.
  const options: LimiterOptions = {
    store,
    prefix,
    name: 'login',
    limit: 1,
    window: '1m',
    denyCacheMs,
    storeTimeout: '5s',
  };
  const middleware = rateLimiter({ ...options, ban: { after: 2, for: '1h' } });
  const app = expressVersions[0]![1]();
  app.use(middleware);
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await request(app).get('/')).status);
  expect(statuses).toEqual([200, 429, 429, 403]);
  return { app, middleware, options };
}

function cases(store: () => Store): void {
  it('the limiter of the middleware lifts the ban', async () => {
    const { app, middleware } = await banned(store(), uniquePrefix('ban'));
    await middleware.limiter.reset('ip:127.0.0.1');
    expect((await request(app).get('/')).status).toBe(200);
    // The strikes went too: one more denial does not ban again.
    expect((await request(app).get('/')).status).toBe(429);
    expect((await request(app).get('/')).status).toBe(429);
  });

  it('a middleware with the same options in another process lifts it (an admin process)', async () => {
    const shared = store();
    // No deny cache: what is proved is that the ban is gone from the store (a cache would hold a
    // denial at most denyCacheMs longer, test/regressions/deny-cache.test.ts).
    const { app, options } = await banned(shared, uniquePrefix('ban'), 0);
    const admin = rateLimiter({ ...options, ban: { after: 2, for: '1h' } });
    await admin.limiter.reset('ip:127.0.0.1');
    expect((await request(app).get('/')).status).toBe(200);
  });
}

describe('reset lifts a ban: MemoryStore', () => {
  cases(() => new MemoryStore());
});

describeRedis('reset lifts a ban: Redis', () => {
  const clients: Array<Redis | Cluster> = [];
  beforeAll(async () => {
    clients.push(standaloneClient(await sharedRedis()), clusterClient(await sharedCluster()));
  });
  afterAll(closeClients);
  describe('standalone', () => cases(() => new RedisStore({ client: clients[0]! })));
  describe('cluster', () => cases(() => new RedisStore({ client: clients[1]! })));
});

import { connectRedis } from '@sluice-examples/shared/redis.js';
import type { Redis } from 'ioredis';
import { describeRedis, sharedRedis } from '../../test/support/redis.js';
import {
  ask,
  closedPort,
  envForSuite,
  inventedKeys,
  listenExpress,
  type Running,
  sluiceWarningsOf,
  startUp,
  statuses,
  uniquePrefix,
} from '../shared/listen.js';
import { createApp } from './app.js';

describeRedis('examples/express-redis', () => {
  let client: Redis;
  let servers: Running[];
  envForSuite('REDIS_URL', sharedRedis);
  beforeAll(async () => {
    client = await connectRedis();
  });
  afterAll(() => client.disconnect());
  beforeEach(async () => {
    // Two servers on one Redis, as two processes behind a load balancer would be.
    const prefix = uniquePrefix('express-redis');
    servers = [
      await listenExpress(createApp({ client, prefix, storeTimeout: '5s' })),
      await listenExpress(createApp({ client, prefix, storeTimeout: '5s' })),
    ];
  });
  afterEach(async () => {
    for (const server of servers) await server.close();
  });

  it('sends both policies in the RateLimit fields', async () => {
    const answer = await ask(`${servers[0]!.url}/`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('ratelimit-policy')).toBe('"burst";q=10;w=1, "hourly";q=1000;w=3600');
    expect(answer.headers.get('ratelimit')).toMatch(/^"burst";r=9;t=1, "hourly";r=999;t=\d+$/);
  });

  it('two servers draw from one quota', async () => {
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        ask(`${servers[i % 2]!.url}/`, { headers: { 'x-api-key': 'key-ada' } }),
      ),
    );
    const elapsedMs = Date.now() - started;
    const allowed = statuses(answers).filter((s) => s === 200).length;
    // A bucket of 10, refilled at one per 100 ms while the requests ran; separate counters would allow 20.
    expect(allowed).toBeGreaterThanOrEqual(10);
    expect(allowed).toBeLessThanOrEqual(10 + Math.ceil(elapsedMs / 100));
    const denied = answers.filter((a) => a.status === 429);
    expect(denied.length).toBeGreaterThan(0);
    expect(denied[0]!.body.policy).toBe('burst');
    // Another client has its own quota.
    expect((await ask(`${servers[1]!.url}/`, { headers: { 'x-api-key': 'key-bob' } })).status).toBe(200);
  });

  it('a client inventing a key per request draws from one quota all the same', async () => {
    const started = Date.now();
    const answers = await Promise.all(
      inventedKeys(30).map((key, i) => ask(`${servers[i % 2]!.url}/`, { headers: { 'x-api-key': key } })),
    );
    const elapsedMs = Date.now() - started;
    const allowed = statuses(answers).filter((s) => s === 200).length;
    // Unknown keys count as none: one client, one bucket of 10, refilled at one per 100 ms.
    expect(allowed).toBeGreaterThanOrEqual(10);
    expect(allowed).toBeLessThanOrEqual(10 + Math.ceil(elapsedMs / 100));
    expect(answers.find((a) => a.status === 429)?.body.policy).toBe('burst');
  });

  it('starts without ERR_SLUICE_UNVERIFIED_CREDENTIAL', async () => {
    const codes = await sluiceWarningsOf(() => createApp({ client }));
    expect(codes).not.toContain('ERR_SLUICE_UNVERIFIED_CREDENTIAL');
  });

  it('says how to start Redis when it cannot reach it, and exits 1', async () => {
    const url = `redis://127.0.0.1:${await closedPort()}`;
    const { status, stderr } = await startUp(__dirname, 'connectRedis', { REDIS_URL: url });
    expect(status).toBe(1);
    expect(stderr).toContain(`Cannot reach Redis at ${url}`);
    expect(stderr).toContain('docker compose up -d redis');
    expect(stderr).toContain('redis-server --port 6379');
  });
});

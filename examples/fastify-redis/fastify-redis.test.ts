import { connectRedis } from '@sluice-examples/shared/redis.js';
import type { Redis } from 'ioredis';
import { describeRedis, sharedRedis } from '../../test/support/redis.js';
import { ask, askInTurn, listenFastify, type Running, statuses, uniquePrefix } from '../shared/listen.js';
import { buildApp } from './app.js';

describeRedis('examples/fastify-redis', () => {
  let client: Redis;
  let servers: Running[];
  beforeAll(async () => {
    client = await connectRedis(await sharedRedis());
  });
  afterAll(() => client.disconnect());
  beforeEach(async () => {
    const prefix = uniquePrefix('fastify-redis');
    servers = [
      await listenFastify(await buildApp({ client, prefix })),
      await listenFastify(await buildApp({ client, prefix })),
    ];
  });
  afterEach(async () => {
    for (const server of servers) await server.close();
  });

  it('the global limit covers every route, shared by both servers', async () => {
    const [a, b] = servers as [Running, Running];
    expect((await ask(`${a.url}/`)).body.remaining).toBe(99);
    expect((await ask(`${b.url}/`)).body.remaining).toBe(98);
    const answer = await ask(`${a.url}/`);
    expect(answer.headers.get('ratelimit-policy')).toBe('"100-per-1m";q=100;w=60');
  });

  it('GET /search has its own token bucket, shared by both servers', async () => {
    const [a, b] = servers as [Running, Running];
    const first = await askInTurn(3, `${a.url}/search`, { headers: { 'x-api-key': 'searcher' } });
    const then = await askInTurn(3, `${b.url}/search`, { headers: { 'x-api-key': 'searcher' } });
    const answers = [...first, ...then];
    // 5 in the bucket, one back every 2 s: the sixth is denied unless the six took 2 s.
    expect(statuses(answers).slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    if (answers[5]!.at - answers[0]!.at < 1_900) {
      expect(answers[5]!.status).toBe(429);
      expect(answers[5]!.body.policy).toBe('5-per-10s');
    }
    expect(answers[0]!.headers.get('ratelimit-policy')).toBe('"5-per-10s";q=5;w=10');
    // Searching spent nothing of the global limit.
    expect((await ask(`${a.url}/`, { headers: { 'x-api-key': 'searcher' } })).body.remaining).toBe(99);
  });

  it('GET /health is not limited and sends no RateLimit fields', async () => {
    const answers = await askInTurn(5, `${servers[0]!.url}/health`);
    expect(statuses(answers)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.every((a) => !a.headers.has('ratelimit') && !a.headers.has('ratelimit-policy'))).toBe(
      true,
    );
  });
});

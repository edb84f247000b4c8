import { connectRedis } from '@sluice-examples/shared/redis.js';
import type { Redis } from 'ioredis';
import { describeRedis, sharedRedis } from '../../test/support/redis.js';
import {
  type Answer,
  ask,
  askInTurn,
  inventedKeys,
  listenFastify,
  type Running,
  sluiceWarningsOf,
  statuses,
  uniquePrefix,
} from '../shared/listen.js';
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
      await listenFastify(await buildApp({ client, prefix, storeTimeout: '5s' })),
      await listenFastify(await buildApp({ client, prefix, storeTimeout: '5s' })),
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
    const first = await askInTurn(3, `${a.url}/search`, { headers: { 'x-api-key': 'key-ada' } });
    const then = await askInTurn(3, `${b.url}/search`, { headers: { 'x-api-key': 'key-ada' } });
    const answers = [...first, ...then];
    // 5 in the bucket, one back every 2 s: the sixth is denied unless the six took 2 s.
    expect(statuses(answers).slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    if (answers[5]!.at - answers[0]!.at < 1_900) {
      expect(answers[5]!.status).toBe(429);
      expect(answers[5]!.body.policy).toBe('5-per-10s');
    }
    expect(answers[0]!.headers.get('ratelimit-policy')).toBe('"5-per-10s";q=5;w=10');
    // Searching spent nothing of the global limit.
    expect((await ask(`${a.url}/`, { headers: { 'x-api-key': 'key-ada' } })).body.remaining).toBe(99);
  });

  it('GET /health is not limited and sends no RateLimit fields', async () => {
    const answers = await askInTurn(5, `${servers[0]!.url}/health`);
    expect(statuses(answers)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.every((a) => !a.headers.has('ratelimit') && !a.headers.has('ratelimit-policy'))).toBe(
      true,
    );
  });

  it('a client inventing a key per request is limited as one client, on every route', async () => {
    const [a, b] = servers as [Running, Running];
    const keys = inventedKeys(8);
    // The global limit: each request counted against the one client, whatever key it sent.
    const global: Answer[] = [];
    for (const key of keys.slice(0, 2))
      global.push(await ask(`${a.url}/`, { headers: { 'x-api-key': key } }));
    expect(global.map((g) => g.body.remaining)).toEqual([99, 98]);
    // GET /search's bucket of 5: the sixth fresh key is refused unless the six took 2 s.
    const search: Answer[] = [];
    for (const [i, key] of keys.slice(2).entries()) {
      search.push(await ask(`${[a, b][i % 2]!.url}/search`, { headers: { 'x-api-key': key } }));
    }
    expect(statuses(search).slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    if (search[5]!.at - search[0]!.at < 1_900) expect(search[5]!.status).toBe(429);
  });

  it('starts without ERR_SLUICE_UNVERIFIED_CREDENTIAL', async () => {
    const codes = await sluiceWarningsOf(async () => (await buildApp({ client })).close());
    expect(codes).not.toContain('ERR_SLUICE_UNVERIFIED_CREDENTIAL');
  });
});

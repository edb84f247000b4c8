import { ask, askInTurn, listenFastify, startEach, statuses } from '../shared/listen.js';
import { buildApp } from './app.js';

describe('examples/fastify-basic', () => {
  const app = startEach(async () => listenFastify(await buildApp()));

  it('limits every route to 100 per minute and says so in the RateLimit fields', async () => {
    const answer = await ask(`${app.url}/`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ hello: 'world', remaining: 99 });
    expect(answer.headers.get('ratelimit-policy')).toBe('"100-per-1m";q=100;w=60');
    expect(answer.headers.get('ratelimit')).toMatch(/^"100-per-1m";r=99;t=\d+$/);
  });

  it('GET /search has its own limit instead of the global one', async () => {
    const answers = await askInTurn(4, `${app.url}/search`);
    expect(statuses(answers)).toEqual([200, 200, 200, 429]);
    expect(answers[0]!.headers.get('ratelimit-policy')).toBe('"3-per-10s";q=3;w=10');
    expect(answers[3]!.body).toMatchObject({ status: 429, policy: '3-per-10s' });
    expect(Number(answers[3]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The searches did not count against the global limit.
    expect((await ask(`${app.url}/`)).body.remaining).toBe(99);
  });
});

import { ask, askInTurn, startEach, statuses } from '../shared/listen.js';
import { createApp } from './app.js';

describe('examples/nestjs-basic', () => {
  const app = startEach(async () => {
    const nest = await createApp();
    await nest.listen(0, '127.0.0.1');
    const { port } = nest.getHttpServer().address() as { port: number };
    return { url: `http://127.0.0.1:${port}`, close: () => nest.close() };
  });

  it('limits every route to 100 per 15 minutes and says so in the RateLimit fields', async () => {
    const answer = await ask(`${app.url}/`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ hello: 'world', remaining: 99 });
    expect(answer.headers.get('ratelimit-policy')).toBe('"100-per-15m";q=100;w=900');
    expect(answer.headers.get('ratelimit')).toMatch(/^"100-per-15m";r=99;t=\d+$/);
  });

  it('allows 5 logins a minute (its own limit), then answers 429 with Retry-After and a problem+json body', async () => {
    // The module (and so its limiter) is made once, at import: each test counts on from the last.
    const before = (await ask(`${app.url}/`)).body.remaining;
    const answers = await askInTurn(6, `${app.url}/login`, { method: 'POST' });
    expect(statuses(answers)).toEqual([201, 201, 201, 201, 201, 429]); // 201: Nest's answer to a POST
    const denied = answers[5]!;
    expect(denied.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(denied.body).toMatchObject({ status: 429, policy: '5-per-1m' });
    const retryAfter = Number(denied.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(59);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(denied.body.retryAfter).toBe(retryAfter);
    // @RateLimit() replaces the module's limit on /login: the app-wide count is untouched.
    expect((await ask(`${app.url}/`)).body.remaining).toBe(before - 1);
  });
});

import { ask, askInTurn, type Running, statuses } from './listen.js';

/**
 * What every *-basic example promises, whatever its framework: 100 requests per 15 minutes on every
 * route, 5 logins a minute, the RateLimit fields and a problem+json 429. Call inside its describe.
 */
export function basicAppCases(app: Running): void {
  it('limits every route to 100 per 15 minutes and says so in the RateLimit fields', async () => {
    const answer = await ask(`${app.url}/`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ hello: 'world', remaining: 99 });
    expect(answer.headers.get('ratelimit-policy')).toBe('"100-per-15m";q=100;w=900');
    expect(answer.headers.get('ratelimit')).toMatch(/^"100-per-15m";r=99;t=\d+$/);
  });

  it('allows 5 logins a minute, then answers 429 with Retry-After and a problem+json body', async () => {
    const answers = await askInTurn(6, `${app.url}/login`, { method: 'POST' });
    expect(statuses(answers)).toEqual([200, 200, 200, 200, 200, 429]);
    const denied = answers[5]!;
    expect(denied.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(denied.body).toMatchObject({ status: 429, policy: '5-per-1m' });
    const retryAfter = Number(denied.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(59);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(denied.body.retryAfter).toBe(retryAfter);
    // The app-wide limit counted the six login attempts too.
    expect((await ask(`${app.url}/`)).body.remaining).toBe(93);
  });
}

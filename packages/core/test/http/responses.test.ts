import {
  bannedBody,
  deniedBody,
  limitedBody,
  MAX_BODIES,
  ProblemBodies,
  storeErrorBody,
} from '../../src/http/responses.js';

describe('problem+json bodies', () => {
  test('429: status, title, detail, policy, retryAfter in seconds rounded up', () => {
    expect(limitedBody(429, 'per-minute', 30_001)).toEqual({
      status: 429,
      title: 'Too Many Requests',
      detail: 'Rate limit "per-minute" exceeded. Retry in 31 seconds.',
      policy: 'per-minute',
      retryAfter: 31,
    });
    expect(limitedBody(429, 'p', 10).retryAfter).toBe(1);
  });

  test('a cost that never fits: no retryAfter', () => {
    const body = limitedBody(429, 'p', Infinity);
    expect(body).not.toHaveProperty('retryAfter');
    expect(body.detail).toMatch(/costs more/);
  });

  test('another statusCode takes its own title', () => {
    expect(limitedBody(503, 'p', 1000)).toMatchObject({ status: 503, title: 'Service Unavailable' });
    expect(limitedBody(499, 'p', 1000)).toMatchObject({ status: 499, title: 'Error' });
  });

  test('403 for denyList: no retry; 403 for a ban: retry when it ends', () => {
    expect(deniedBody()).toEqual({
      status: 403,
      title: 'Forbidden',
      detail: 'This client is not allowed.',
      policy: 'deny-list',
    });
    expect(bannedBody(3_600_000)).toEqual({
      status: 403,
      title: 'Forbidden',
      detail: 'Banned after repeated rate limit denials. Retry in 3600 seconds.',
      policy: 'ban',
      retryAfter: 3600,
    });
  });

  test('503 for a failed store', () => {
    expect(storeErrorBody('p')).toEqual({
      status: 503,
      title: 'Service Unavailable',
      detail: 'The rate limiter is unavailable. Retry in 1 second.',
      policy: 'p',
      retryAfter: 1,
    });
  });

  test('ProblemBodies: the JSON of limitedBody, remembered per policy and whole second, bounded', () => {
    const bodies = new ProblemBodies((policy, ms) => limitedBody(429, policy, ms));
    const json = (policy: string, ms: number) => JSON.stringify(limitedBody(429, policy, ms));
    for (const [policy, ms] of [
      ['per-minute', 30_001],
      ['per-minute', 30_500],
      ['per-minute', 1],
      ['hourly', 30_001],
      ['per-minute', Infinity],
      ['hourly', Infinity],
      ['say "hi"', 2000],
    ] as const) {
      expect(bodies.json(policy, ms)).toBe(json(policy, ms));
    }
    expect(new ProblemBodies((policy, ms) => limitedBody(503, policy, ms)).json('p', 1000)).toBe(
      JSON.stringify(limitedBody(503, 'p', 1000)),
    );
    const cache = Reflect.get(bodies, 'bodies') as Map<string, Map<number, string>>;
    for (let s = 1; s <= MAX_BODIES * 3; s++) {
      expect(bodies.json('p', s * 1000)).toBe(json('p', s * 1000));
      expect(cache.get('p')!.size).toBeLessThanOrEqual(MAX_BODIES);
    }
  });
});

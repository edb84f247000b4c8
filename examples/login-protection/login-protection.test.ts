import { ask, listenExpress, startEach } from '../shared/listen.js';
import { createApp, TEN_FAILURES } from './app.js';

describe('examples/login-protection', () => {
  const app = startEach(() => listenExpress(createApp()));
  const login = (password: string) =>
    ask(`${app.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: 'ada', password }),
    });

  it('successful logins are given back: they never run out', async () => {
    for (let i = 0; i < 8; i++) expect((await login('correct horse battery staple')).status).toBe(200);
  });

  it('ten wrong passwords get exactly what server.js says they get', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await login('guess')).status);
    expect(statuses).toEqual(TEN_FAILURES);
  });

  it('5 failures a minute, then 429, then a 15 minute ban answered 403', async () => {
    const failures: number[] = [];
    for (let i = 0; i < 5; i++) failures.push((await login('guess')).status);
    expect(failures).toEqual([401, 401, 401, 401, 401]);

    const denied = await login('guess');
    expect(denied.status).toBe(429);
    expect(denied.body).toMatchObject({ status: 429, policy: '5-per-1m' });
    expect(Number(denied.headers.get('retry-after'))).toBeGreaterThan(0);

    // Denied 3 times within the minute: banned.
    const next = [
      (await login('guess')).status,
      (await login('guess')).status,
      (await login('guess')).status,
    ];
    expect(next.slice(0, 1)).toEqual([429]);
    expect(next).toContain(403);
    const banned = await login('correct horse battery staple');
    expect(banned.status).toBe(403);
    expect(banned.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(banned.body.status).toBe(403);
    const retryAfter = Number(banned.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(14 * 60);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
  });
});

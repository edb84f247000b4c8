import { type Answer, ask, askInTurn, listenExpress, startEach, statuses } from '../shared/listen.js';
import { createApp } from './app.js';

describe('examples/tiered-plans', () => {
  const app = startEach(() => listenExpress(createApp()));
  const things = () => `${app.url}/v1/things`;
  const withKey = (key: string) => ({ headers: { 'x-api-key': key } });

  it('a free key gets the free plan: a burst of 5, and both policies in the headers', async () => {
    const answers = await askInTurn(6, things(), withKey('free-key-123'));
    expect(statuses(answers)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(answers[0]!.body.plan).toBe('free');
    expect(answers[0]!.headers.get('ratelimit-policy')).toBe('"burst";q=5;w=10, "hourly";q=100;w=3600');
    expect(answers[0]!.headers.get('ratelimit')).toMatch(/^"burst";r=4;t=\d+, "hourly";r=99;t=\d+$/);
    expect(answers[5]!.body.policy).toBe('burst');
  });

  it('a pro key gets the pro plan: 50 per 10 s with bursts of 100', async () => {
    const answers = await askInTurn(20, things(), withKey('pro-key-456'));
    expect(statuses(answers).every((s) => s === 200)).toBe(true);
    expect(answers[0]!.body.plan).toBe('pro');
    expect(answers[0]!.headers.get('ratelimit-policy')).toBe('"burst";q=50;w=10, "hourly";q=10000;w=3600');
  });

  it('each customer has its own counters', async () => {
    await askInTurn(5, things(), withKey('free-key-123'));
    expect((await ask(things(), withKey('free-key-123'))).status).toBe(429);
    // Anonymous clients are limited by IP, apart from the customer on the same address.
    expect((await ask(things())).status).toBe(200);
  });

  it('unknown keys count as no key: rotating made-up keys does not escape the IP limit', async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < 6; i++) answers.push(await ask(things(), withKey(`made-up-${i}`)));
    expect(statuses(answers)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(answers[0]!.body.plan).toBe('free');
    expect((await ask(things())).status).toBe(429);
  });
});

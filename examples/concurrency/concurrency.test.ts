import { ask, listenFastify, startEach, statuses } from '../shared/listen.js';
import { buildApp } from './app.js';

describe('examples/concurrency', () => {
  const app = startEach(async () => listenFastify(await buildApp({ workMs: 400 })));
  const exportAs = (key: string) => ask(`${app.url}/export`, { headers: { 'x-api-key': key } });

  it('runs at most 2 exports at a time per key, and frees a slot when one finishes', async () => {
    const first = await Promise.all([exportAs('k'), exportAs('k'), exportAs('k')]);
    expect(statuses(first).sort()).toEqual([200, 200, 429]);
    const refused = first.find((a) => a.status === 429)!;
    expect(refused.body.policy).toBe('2-concurrent');
    // Nothing released it, so the honest bound is the lease expiry.
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(290);

    // Both finished: their leases are back.
    const second = await Promise.all([exportAs('k'), exportAs('k')]);
    expect(statuses(second)).toEqual([200, 200]);
  });

  it('keys do not share slots', async () => {
    const answers = await Promise.all([exportAs('a'), exportAs('a'), exportAs('b'), exportAs('b')]);
    expect(statuses(answers)).toEqual([200, 200, 200, 200]);
  });
});

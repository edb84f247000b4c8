import { ask, inventedKeys, listenFastify, sluiceWarningsOf, startEach, statuses } from '../shared/listen.js';
import { buildApp } from './app.js';

describe('examples/concurrency', () => {
  const app = startEach(async () => listenFastify(await buildApp({ workMs: 400 })));
  const exportAs = (key: string) => ask(`${app.url}/export`, { headers: { 'x-api-key': key } });

  it('runs at most 2 exports at a time per key, and frees a slot when one finishes', async () => {
    const first = await Promise.all([exportAs('key-ada'), exportAs('key-ada'), exportAs('key-ada')]);
    expect(statuses(first).sort()).toEqual([200, 200, 429]);
    const refused = first.find((a) => a.status === 429)!;
    expect(refused.body.policy).toBe('2-concurrent');
    // Nothing released it, so the honest bound is the lease expiry.
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(290);

    // Both finished: their leases are back.
    const second = await Promise.all([exportAs('key-ada'), exportAs('key-ada')]);
    expect(statuses(second)).toEqual([200, 200]);
  });

  it('keys do not share slots', async () => {
    const answers = await Promise.all([
      exportAs('key-ada'),
      exportAs('key-ada'),
      exportAs('key-bob'),
      exportAs('key-bob'),
    ]);
    expect(statuses(answers)).toEqual([200, 200, 200, 200]);
  });

  it('a client inventing a key per request is still held to 2 at a time: unknown keys count as none', async () => {
    const answers = await Promise.all(inventedKeys(6).map(exportAs));
    expect(statuses(answers).sort()).toEqual([200, 200, 429, 429, 429, 429]);
    // They were the IP's 2 slots: a known key on the same address still has its own.
    expect((await exportAs('key-bob')).status).toBe(200);
  });

  it('starts without ERR_SLUICE_UNVERIFIED_CREDENTIAL', async () => {
    const codes = await sluiceWarningsOf(async () => (await buildApp()).close());
    expect(codes).not.toContain('ERR_SLUICE_UNVERIFIED_CREDENTIAL');
  });
});

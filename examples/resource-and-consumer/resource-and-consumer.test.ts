import {
  type Answer,
  ask,
  askInTurn,
  inventedKeys,
  listenFastify,
  sluiceWarningsOf,
  startEach,
  statuses,
} from '../shared/listen.js';
import { buildApp } from './app.js';

describe('examples/resource-and-consumer', () => {
  const app = startEach(async () => listenFastify(await buildApp()));
  /** `times` reports asked for in turn with this API key (key-a, key-b and key-c are known). */
  const reports = (key: string, times: number) =>
    askInTurn(times, `${app.url}/reports`, { method: 'POST', headers: { 'x-api-key': key } });

  it('each consumer gets 3 a minute, all together 5, decided all-or-nothing', async () => {
    const a = await reports('key-a', 4);
    expect(statuses(a)).toEqual([200, 200, 200, 429]);
    expect(a[3]!.body.policy).toBe('per-consumer');
    expect(a[0]!.headers.get('ratelimit-policy')).toBe('"per-consumer";q=3;w=60, "all-consumers";q=5;w=60');

    // a's refused fourth call spent nothing of the shared limit: b gets exactly the 2 left.
    const b = await reports('key-b', 3);
    expect(statuses(b)).toEqual([200, 200, 429]);
    expect(b[2]!.body.policy).toBe('all-consumers');

    // The shared limit is spent for everyone, even a consumer that made no call yet.
    const c = await reports('key-c', 1);
    expect(statuses(c)).toEqual([429]);
    expect(c[0]!.body.policy).toBe('all-consumers');
  });

  it('routes without config.rateLimit are not limited (global: false)', async () => {
    const answers = await askInTurn(10, `${app.url}/`);
    expect(statuses(answers).every((s) => s === 200)).toBe(true);
    expect(answers[0]!.headers.has('ratelimit')).toBe(false);
  });

  it('a consumer inventing a key per request gets its 3 and spends no more of the shared 5', async () => {
    const minted: Answer[] = [];
    for (const key of inventedKeys(5)) {
      minted.push(await ask(`${app.url}/reports`, { method: 'POST', headers: { 'x-api-key': key } }));
    }
    expect(statuses(minted)).toEqual([200, 200, 200, 429, 429]);
    expect(minted[3]!.body.policy).toBe('per-consumer');
    // Its refused calls spent nothing of the shared limit: a known consumer gets the 2 left.
    expect(statuses(await reports('key-b', 3))).toEqual([200, 200, 429]);
  });

  it('starts without ERR_SLUICE_UNVERIFIED_CREDENTIAL', async () => {
    const codes = await sluiceWarningsOf(async () => (await buildApp()).close());
    expect(codes).not.toContain('ERR_SLUICE_UNVERIFIED_CREDENTIAL');
  });
});

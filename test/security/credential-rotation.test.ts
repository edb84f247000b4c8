import { randomBytes } from 'node:crypto';
import { expectOnlyWarnings } from '../support/warnings.js';
import { FRAMEWORKS, type Server, statuses } from './servers.js';

// Rotating unverified credentials is the attack tried here: its warning is expected, captured.
expectOnlyWarnings('ERR_SLUICE_UNVERIFIED_CREDENTIAL');

/**
 * A client that mints a new API key or token per request must not get a new budget each time.
 * With `verify`, an unknown credential counts as absent and the request falls to the IP subject
 * behind it; without verify, an IP limiter stacked in front still holds the client.
 */
const KNOWN: Record<string, string> = {
  sk_live_known_key_0001: 'account-1',
  tok_known_token_0001: 'account-1',
};
const verify = (credential: string) => KNOWN[credential] ?? null;
const randomKey = (): Record<string, string> => ({
  'x-api-key': `sk_live_${randomBytes(12).toString('hex')}`,
});
const randomToken = (): Record<string, string> => ({
  authorization: `Bearer ${randomBytes(16).toString('base64url')}`,
});
const many = (n: number, make: () => Record<string, string>) => Array.from({ length: n }, make);

describe.each(FRAMEWORKS)('credential rotation on $name', (framework) => {
  let server: Server;
  afterEach(() => server.close());

  it.each([
    ['api keys', 'api-key', randomKey, { 'x-api-key': 'sk_live_known_key_0001' }],
    ['bearer tokens', 'token', randomToken, { authorization: 'Bearer tok_known_token_0001' }],
  ] as const)('random %s with verify fall to the IP limit', async (_label, source, make, known) => {
    server = await framework.serve([{ limit: 3, window: '1m', subject: [source, 'ip'], verify }]);
    expect(await statuses(server, many(6, make))).toEqual([200, 200, 200, 429, 429, 429]);
    // The verified credential is its account's subject, not the exhausted IP's.
    expect(await statuses(server, [known])).toEqual([200]);
  });

  it('a verified credential keeps one budget however it is presented', async () => {
    server = await framework.serve([{ limit: 2, window: '1m', subject: ['api-key', 'token', 'ip'], verify }]);
    const asKey = { 'x-api-key': 'sk_live_known_key_0001' };
    const asToken = { authorization: 'Bearer tok_known_token_0001' };
    // Both map to account-1: switching from the key to the token buys nothing.
    expect(await statuses(server, [asKey, asToken, asKey, asToken])).toEqual([200, 200, 429, 429]);
  });

  it('without verify, an IP limiter in front holds a client rotating keys', async () => {
    server = await framework.serve([
      { name: 'per-ip', limit: 4, window: '1m' },
      { name: 'per-key', limit: 100, window: '1m', subject: 'api-key' },
    ]);
    expect(await statuses(server, many(7, randomKey))).toEqual([200, 200, 200, 200, 429, 429, 429]);
  });

  it('malformed credentials count as absent, not as a fresh subject each', async () => {
    server = await framework.serve([{ limit: 2, window: '1m', subject: ['token', 'api-key', 'ip'], verify }]);
    const junk: Array<Record<string, string>> = [
      { authorization: `Basic ${randomBytes(9).toString('base64')}` },
      { authorization: 'Bearer' },
      { authorization: `Bearer ${randomBytes(6).toString('hex')} extra` },
      { 'x-api-key': '' },
    ];
    expect(await statuses(server, junk)).toEqual([200, 200, 429, 429]);
  });
});

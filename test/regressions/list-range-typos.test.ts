import { ErrorCodes, SluiceConfigError } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import type { SharedOptions } from '../adapters/framework.js';
import { eachFramework } from '../adapters/frameworks.js';
import { get, serving } from '../adapters/support.js';
import { expectOnlyWarnings } from '../support/warnings.js';

// Credentials without verify are what these cases send: the warning is expected, captured.
expectOnlyWarnings('ERR_SLUICE_UNVERIFIED_CREDENTIAL');

// API.md r3: an entry written as a range (ending in '/' and digits) whose address part is no IP
// address became a subject entry that never matched the addresses meant (`10.0.0.O/8` with a letter O
// left 10.0.0.0/8 limited, or not denied). It is a configuration error now.
// '10.0.0.O/8', 'not-an-ip/8', '::g/64' and 'team/7' failed on 6cc09fa ('1.2.3/8' was already an error).

/** The configuration error of this list with this one entry. */
function entryError(option: 'allowList' | 'denyList', entry: string): SluiceConfigError {
  try {
    rateLimiter({ limit: 1, window: '1m', [option]: [entry] });
  } catch (error) {
    if (error instanceof SluiceConfigError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(entry)} was accepted`);
}

describe('list entries written as ranges', () => {
  describe.each(['allowList', 'denyList'] as const)('%s', (option) => {
    it.each(['10.0.0.O/8', 'not-an-ip/8', '1.2.3/8', '::g/64', 'team/7', '/24'])(
      '%s is ERR_SLUICE_INVALID_OPTION, not a subject entry',
      (entry) => {
        const error = entryError(option, entry);
        expect(error.code).toBe(ErrorCodes.INVALID_OPTION);
        expect(error.option).toBe(`${option}[0]`);
      },
    );
  });

  // Found by the review of 4a2b25a: an address written with a port became a subject entry that never
  // matched, though a client's address with a port is that address (API.md r3).
  it.each([
    ['203.0.113.66:51000', '"203.0.113.66"'],
    ['[2001:db8::1]:443', '"2001:db8:0:0:0:0:0:1"'],
  ])('%s, an address with a port, is ERR_SLUICE_INVALID_OPTION naming the address', (entry, address) => {
    const error = entryError('denyList', entry);
    expect(error.code).toBe(ErrorCodes.INVALID_OPTION);
    expect(error.message).toContain(`write ${address}`);
  });

  it('the message names the entry and says what to write instead', () => {
    const { message } = entryError('allowList', '10.0.0.O/8');
    expect(message).toContain('"10.0.0.O/8"');
    expect(message).toMatch(
      /not an IP address; write the range with an IP address, such as '10\.0\.0\.0\/8'/,
    );
    expect(message).toContain('(req, subject) => subject ===');
  });

  it('a key-like entry ending in a slash and digits is not echoed', () => {
    const key = 'sk_live_0123456789abcdef/42';
    expect(entryError('denyList', key).message).not.toContain(key);
  });

  it.each(['team/lead', 'user/42x', 'team/', 'a/7/b', 'partner-key'])('%s stays a subject entry', (entry) => {
    expect(() => rateLimiter({ limit: 1, window: '1m', allowList: [entry] })).not.toThrow();
  });
});

describe.each(eachFramework)(
  '%s: a slash entry that is no range still matches its subject',
  (_name, framework) => {
    const start = serving(framework);

    it('an API key with a slash in it is allow-listed', async () => {
      const options: SharedOptions = {
        limit: 1,
        window: '1m',
        subject: ['api-key', 'ip'],
        allowList: ['team/lead'],
      };
      const app = await start(options);
      const headers = { 'x-api-key': 'team/lead' };
      expect([(await get(app, '/ok', headers)).status, (await get(app, '/ok', headers)).status]).toEqual([
        200, 200,
      ]);
      expect([(await get(app, '/ok')).status, (await get(app, '/ok')).status]).toEqual([200, 429]);
    });
  },
);

import { ErrorCodes, SluiceConfigError } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import type { SharedOptions } from '../adapters/framework.js';
import { eachFramework } from '../adapters/frameworks.js';
import { get, serving } from '../adapters/support.js';

// With subject ['api-key', 'token', 'ip'] and allowList ['10.0.0.5'], a client sending
// `x-api-key: 10.0.0.5` or `Authorization: Bearer 10.0.0.5` was never limited, and CIDR entries
// never matched (a deny list of ranges failed open). Entries are typed by form now (API.md r2).
// Failed on 13f5928 (Express and Fastify then; every framework of the shared suite now).

describe.each(eachFramework)('%s: list entries are matched by their form', (_name, framework) => {
  const start = serving(framework);
  /** Two requests with these headers, from the client X-Forwarded-For names; the status of the second. */
  const make = async (options: SharedOptions) => {
    const app = await start(options, { trustProxy: true });
    return async (headers: Record<string, string>) => {
      await get(app, '/ok', headers);
      return (await get(app, '/ok', headers)).status;
    };
  };
  // validate off: an unverified credential and trust proxy = true are what these cases need, and their
  // warnings are validation-warnings.test.ts's subject.
  const limit = {
    limit: 1,
    window: '1m',
    subject: ['api-key', 'token', 'ip'] as SharedOptions['subject'],
    validate: false,
  };
  const from = (ip: string, more: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...more });

  it('an address entry does not match a credential that spells it', async () => {
    const ask = await make({ ...limit, allowList: ['10.0.0.5'] });
    expect(await ask(from('198.51.100.1', { 'x-api-key': '10.0.0.5' }))).toBe(429);
    expect(await ask(from('198.51.100.2', { authorization: 'Bearer 10.0.0.5' }))).toBe(429);
    expect(await ask(from('10.0.0.5'))).toBe(200);
  });

  it('CIDR ranges match client addresses, IPv4 and IPv6', async () => {
    const ask = await make({ ...limit, allowList: ['10.0.0.0/8', '2001:db8::/32'] });
    expect(await ask(from('10.200.3.4'))).toBe(200);
    expect(await ask(from('::ffff:10.9.9.9'))).toBe(200);
    expect(await ask(from('2001:db8:42::7'))).toBe(200);
    expect(await ask(from('2001:db9::7'))).toBe(429);
  });

  it('an IPv4-mapped range matches the IPv4 clients in it, in either spelling (hostile review D5)', async () => {
    const ask = await make({ ...limit, allowList: ['::ffff:10.0.0.0/104'] });
    expect(await ask(from('10.200.3.4'))).toBe(200);
    expect(await ask(from('::ffff:10.9.9.9'))).toBe(200);
    expect(await ask(from('11.0.0.1'))).toBe(429);
    expect(await ask(from('::ffff:11.0.0.2'))).toBe(429);
    const deny = await make({ ...limit, limit: 100, denyList: ['::ffff:c000:200/120'] });
    expect(await deny(from('192.0.2.9'))).toBe(403);
    expect(await deny(from('192.0.3.9'))).toBe(200);
  });

  it('a deny list of ranges answers 403', async () => {
    const ask = await make({ ...limit, limit: 100, denyList: ['203.0.113.0/24'] });
    expect(await ask(from('203.0.113.77'))).toBe(403);
    expect(await ask(from('203.0.114.1'))).toBe(200);
  });

  it('other entries match the subject: a verified one, or the raw key', async () => {
    const verified = await make({
      ...limit,
      verify: (key: string) => (key === 'k-alice' ? 'alice' : null),
      allowList: ['alice'],
    });
    expect(await verified(from('198.51.100.3', { 'x-api-key': 'k-alice' }))).toBe(200);
    const raw = await make({ ...limit, allowList: ['partner-key'] });
    expect(await raw(from('198.51.100.4', { 'x-api-key': 'partner-key' }))).toBe(200);
  });
});

describe('malformed address entries', () => {
  it.each(['10.0.0.0/33', '999.1.1.1', '2001:db8::/129', '10.0.0.0/', '10.0.0/8', '1.2.3.4/-1'])(
    '%s is a configuration error',
    (entry) => {
      const make = () => rateLimiter({ limit: 1, window: '1m', allowList: [entry] });
      expect(make).toThrow(SluiceConfigError);
      expect(make).toThrow(
        expect.objectContaining({ code: ErrorCodes.INVALID_OPTION, option: 'allowList[0]' }),
      );
    },
  );
});

/** The configuration error of a list with this one entry. */
function entryError(entry: string): SluiceConfigError {
  try {
    rateLimiter({ limit: 1, window: '1m', allowList: [entry] });
  } catch (error) {
    if (error instanceof SluiceConfigError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(entry)} was accepted`);
}

// Hostile review D5: a malformed entry of 16 characters or more was described as "a string of 19
// characters"; an address with a stray space (a list split on ',' from an environment variable)
// became a subject entry that no request could ever match.
describe('what a list entry error says', () => {
  it.each(['::ffff:10.0.0.0/80', '::ffff:10.0.0.0/129', '2001:db8:1:2:3:4:5:6/129', '10.0.0.0/33'])(
    '%s: names the value given',
    (entry) => {
      const error = entryError(entry);
      expect(error.code).toBe(ErrorCodes.INVALID_OPTION);
      expect(error.message).toContain(JSON.stringify(entry));
    },
  );

  it('a very long entry is quoted in part, with its length', () => {
    const entry = `10.0.0.0/${'1'.repeat(300)}`;
    const { message } = entryError(entry);
    expect(message).toContain(JSON.stringify(entry.slice(0, 40)).slice(0, -1));
    expect(message).toContain('309 characters');
    expect(message).not.toContain(entry);
  });

  it.each([' 10.0.0.1', '10.0.0.0/8 ', '\t2001:db8::/32', ' partner-key'])(
    '%j: surrounding whitespace is a configuration error, not a subject entry',
    (entry) => {
      const error = entryError(entry);
      expect(error.code).toBe(ErrorCodes.INVALID_OPTION);
      expect(error.option).toBe('allowList[0]');
      expect(error.message).toMatch(/whitespace/);
    },
  );

  it('an address with whitespace around it is named; a subject entry is not echoed', () => {
    expect(entryError(' 10.0.0.1').message).toContain('" 10.0.0.1"');
    const key = ' sk_live_0123456789abcdef';
    expect(entryError(key).message).not.toContain(key.trim());
  });
});

import { createHttpHandler, createLimiter, ErrorCodes, MemoryStore, SluiceConfigError } from '@sluice/core';
import { fakeReader } from './support.js';

const base = { limit: 5, window: '1m' };

function codeOf(options: Record<string, unknown>): string | undefined {
  try {
    createHttpHandler(options, fakeReader);
  } catch (error) {
    expect(error).toBeInstanceOf(SluiceConfigError);
    return (error as SluiceConfigError).code;
  }
  return undefined;
}

describe('HTTP options are parsed once, at construction', () => {
  test.each<[string, Record<string, unknown>, string]>([
    ['an unknown option', { ...base, max: 5 }, ErrorCodes.UNKNOWN_OPTION],
    [
      'an unknown option beside limiter',
      { limiter: createLimiter(base), windowMs: 5 },
      ErrorCodes.UNKNOWN_OPTION,
    ],
    ['limiter with core options', { ...base, limiter: createLimiter(base) }, ErrorCodes.CONFLICTING_OPTIONS],
    [
      'limiter with a store',
      { limiter: createLimiter(base), store: new MemoryStore() },
      ErrorCodes.CONFLICTING_OPTIONS,
    ],
    ['limiter that is not one', { limiter: {} }, ErrorCodes.INVALID_OPTION],
    ['no policy', {}, ErrorCodes.NO_POLICY],
    ['a bad window', { limit: 5, window: '5 fortnights' }, ErrorCodes.INVALID_DURATION],
    ['subject unknown', { ...base, subject: 'cookie' }, ErrorCodes.INVALID_OPTION],
    ['subject empty array', { ...base, subject: [] }, ErrorCodes.INVALID_OPTION],
    ['subject array with a bad entry', { ...base, subject: ['ip', 7] }, ErrorCodes.INVALID_OPTION],
    // biome-ignore lint/suspicious/noSparseArray: a hole is what is tested
    ['subject sparse array', { ...base, subject: [, 'ip'] }, ErrorCodes.INVALID_OPTION],
    // biome-ignore lint/suspicious/noSparseArray: a hole is what is tested
    ['allowList sparse array', { ...base, allowList: [, '1.2.3.4'] }, ErrorCodes.INVALID_OPTION],
    ['apiKey not an object', { ...base, apiKey: 'x-key' }, ErrorCodes.INVALID_OPTION],
    ['apiKey unknown key', { ...base, apiKey: { cookie: 'k' } }, ErrorCodes.UNKNOWN_OPTION],
    ['apiKey empty', { ...base, apiKey: {} }, ErrorCodes.INVALID_OPTION],
    ['apiKey.header empty', { ...base, apiKey: { header: '' } }, ErrorCodes.INVALID_OPTION],
    ['verify not a function', { ...base, verify: true }, ErrorCodes.INVALID_OPTION],
    ['ipv6Subnet 0', { ...base, ipv6Subnet: 0 }, ErrorCodes.INVALID_OPTION],
    ['ipv6Subnet 129', { ...base, ipv6Subnet: 129 }, ErrorCodes.INVALID_OPTION],
    ['ipv6Subnet true', { ...base, ipv6Subnet: true }, ErrorCodes.INVALID_OPTION],
    ['cost 0', { ...base, cost: 0 }, ErrorCodes.INVALID_LIMIT],
    ['cost 1.5', { ...base, cost: 1.5 }, ErrorCodes.INVALID_LIMIT],
    ['skip not a function', { ...base, skip: 'yes' }, ErrorCodes.INVALID_OPTION],
    ['allowList a string', { ...base, allowList: '1.2.3.4' }, ErrorCodes.INVALID_OPTION],
    ['denyList with a number', { ...base, denyList: ['1.2.3.4', 5] }, ErrorCodes.INVALID_OPTION],
    ['ban without for', { ...base, ban: { after: 3 } }, ErrorCodes.INVALID_DURATION],
    ['ban.after 0', { ...base, ban: { after: 0, for: '1h' } }, ErrorCodes.INVALID_LIMIT],
    ['ban.within bad', { ...base, ban: { after: 2, for: '1h', within: -1 } }, ErrorCodes.INVALID_DURATION],
    ['ban unknown key', { ...base, ban: { after: 2, for: '1h', forever: true } }, ErrorCodes.UNKNOWN_OPTION],
    ['headers true', { ...base, headers: true }, ErrorCodes.INVALID_OPTION],
    ['headers draft-9', { ...base, headers: 'draft-9' }, ErrorCodes.INVALID_OPTION],
    ['legacyHeaders a string', { ...base, legacyHeaders: 'yes' }, ErrorCodes.INVALID_OPTION],
    ['statusCode 200', { ...base, statusCode: 200 }, ErrorCodes.INVALID_OPTION],
    ['statusCode a string', { ...base, statusCode: '429' }, ErrorCodes.INVALID_OPTION],
    ['handler not a function', { ...base, handler: {} }, ErrorCodes.INVALID_OPTION],
    ['shadow 1', { ...base, shadow: 1 }, ErrorCodes.INVALID_OPTION],
    ['onDecision a string', { ...base, onDecision: 'log' }, ErrorCodes.INVALID_OPTION],
    ['skipFailedRequests 1', { ...base, skipFailedRequests: 1 }, ErrorCodes.INVALID_OPTION],
    ['skipSuccessfulRequests null', { ...base, skipSuccessfulRequests: null }, ErrorCodes.INVALID_OPTION],
  ])('%s', (_, options, code) => {
    expect(codeOf(options)).toBe(code);
  });

  // express-rate-limit's `headers: true` / `standardHeaders: true` was refused with no word of what to write.
  test('headers: true says to leave it out for draft-10, or write draft-8', () => {
    expect(() => createHttpHandler({ ...base, headers: true as never }, fakeReader)).toThrow(
      /^headers: .*got true: leave it out for the default 'draft-10'.*'draft-8'.*legacyHeaders: true/,
    );
  });

  test('messages name the option and the value, never a long secret-looking string', () => {
    expect(() => createHttpHandler({ ...base, headers: 'draft-9' as 'draft-7' }, fakeReader)).toThrow(
      /^headers: .*"draft-9"/,
    );
    const secret = 'sk_live_'.padEnd(80, 'x');
    expect(() =>
      createHttpHandler({ ...base, denyList: [secret, 5 as unknown as string] }, fakeReader),
    ).toThrow(/^denyList\[1\]: /);
    try {
      createHttpHandler({ ...base, apiKey: { header: secret.repeat(4) } }, fakeReader);
    } catch (error) {
      expect(String(error)).not.toContain(secret);
    }
  });

  test('undefined means absent; every valid option is accepted', () => {
    const handler = createHttpHandler(
      {
        ...base,
        subject: ['api-key', 'token', (req) => req.ip, 'ip'],
        apiKey: { header: 'X-Key', query: 'key' },
        verify: () => null,
        ipv6Subnet: 56,
        cost: () => 1,
        skip: () => false,
        allowList: ['1.2.3.4'],
        denyList: () => false,
        ban: { after: 3, within: '10m', for: '1h' },
        headers: 'draft-6',
        legacyHeaders: true,
        statusCode: 503,
        handler: () => {},
        shadow: false,
        onDecision: () => {},
        skipFailedRequests: true,
        skipSuccessfulRequests: false,
        prefix: undefined,
      },
      fakeReader,
    );
    expect(handler.limiter.policies.map((p) => p.name)).toEqual(['5-per-1m']);
  });

  test('limiter: used as given', () => {
    const limiter = createLimiter(base);
    expect(createHttpHandler({ limiter, headers: 'draft-7' }, fakeReader).limiter).toBe(limiter);
  });

  test('a failing option registers nothing on a shared store (no name-reuse warning later)', () => {
    const store = new MemoryStore();
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      expect(codeOf({ limit: 1, window: '1s', store, name: 'n', statusCode: 200 })).toBe(
        ErrorCodes.INVALID_OPTION,
      );
      createHttpHandler({ limit: 2, window: '1s', store, name: 'n' }, fakeReader);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});

import type { Decision, PolicyInfo } from '@sluice/core';
import { headerWriter, retryAfterSeconds, sfString } from '../../src/http/headers.js';

const policies: PolicyInfo[] = [
  { name: 'burst', algorithm: 'token-bucket', limit: 10, windowMs: 1000, delay: false },
  { name: 'hourly', algorithm: 'sliding-log', limit: 1000, windowMs: 3_600_000, delay: false },
];

function decision(over: Partial<Decision> = {}): Decision {
  return {
    allowed: true,
    limit: 10,
    remaining: 9,
    resetMs: 100,
    retryAfterMs: 0,
    policy: 'burst',
    policies: [
      { ...policies[0]!, remaining: 9, resetMs: 100, allowed: true },
      { ...policies[1]!, remaining: 999, resetMs: 3_600_000, allowed: true },
    ].map(({ delay: _, ...s }) => s),
    ...over,
  };
}

function write(mode: Parameters<typeof headerWriter>[0], legacy: boolean, d = decision()) {
  const into: Record<string, string> = {};
  headerWriter(mode, legacy, policies)?.(d, into);
  return into;
}

describe('header fields', () => {
  test('draft-10: every policy, as the contract shows', () => {
    expect(write('draft-10', false)).toEqual({
      'RateLimit-Policy': '"burst";q=10;w=1, "hourly";q=1000;w=3600',
      RateLimit: '"burst";r=9;t=1, "hourly";r=999;t=3600',
    });
  });

  test('draft-7 and draft-6: the binding policy', () => {
    expect(write('draft-7', false)).toEqual({
      'RateLimit-Policy': '10;w=1',
      RateLimit: 'limit=10, remaining=9, reset=1',
    });
    const hourly = decision({ policy: 'hourly', limit: 1000, remaining: 0, resetMs: 1_800_001 });
    expect(write('draft-6', false, hourly)).toEqual({
      'RateLimit-Policy': '1000;w=3600',
      'RateLimit-Limit': '1000',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '1801',
    });
  });

  test('legacy: epoch seconds, rounded up; alone or beside a draft', () => {
    const spy = jest.spyOn(Date, 'now').mockReturnValue(1_700_000_000_500);
    try {
      expect(write(false, true)).toEqual({
        'X-RateLimit-Limit': '10',
        'X-RateLimit-Remaining': '9',
        'X-RateLimit-Reset': '1700000001',
      });
      expect(Object.keys(write('draft-7', true))).toEqual([
        'RateLimit-Policy',
        'RateLimit',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
      ]);
    } finally {
      spy.mockRestore();
    }
  });

  test('nothing at all: no writer', () => {
    expect(headerWriter(false, false, policies)).toBeUndefined();
  });

  test('Retry-After: whole seconds rounded up, at least 1, none for Infinity', () => {
    expect(retryAfterSeconds(1)).toBe(1);
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(1000)).toBe(1);
    expect(retryAfterSeconds(1001)).toBe(2);
    expect(retryAfterSeconds(59_999)).toBe(60);
    expect(retryAfterSeconds(Infinity)).toBeUndefined();
  });

  test('policy names are structured-field strings', () => {
    expect(sfString('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(sfString('per-user ünïcode\n')).toBe('"per-user ?n?code?"');
  });
});

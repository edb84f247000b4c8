import { ErrorCodes, SluiceConfigError } from '@sluice/core';
import { formatDuration, parseDuration } from '../src/duration.js';

describe('durations', () => {
  it.each([
    ['250ms', 250],
    ['1s', 1000],
    ['10 s', 10_000],
    ['1m', 60_000],
    ['15m', 900_000],
    ['15 minutes', 900_000],
    ['1 minute', 60_000],
    ['1h', 3_600_000],
    ['2 hours', 7_200_000],
    ['1d', 86_400_000],
    ['7 days', 604_800_000],
    ['  1s  ', 1000],
    ['1S', 1000],
    [1, 1],
    [60_000, 60_000],
  ])('%p is %d ms', (value, ms) => {
    expect(parseDuration(value, 'window')).toBe(ms);
  });

  it.each([
    '',
    ' ',
    'soon',
    '1',
    '-1s',
    '0s',
    '0',
    '1 fortnight',
    '1h30m',
    '1e3ms',
    '1,5s',
    // Only the documented forms: no fractions, no other units or abbreviations.
    '1.5s',
    '1w',
    '2 weeks',
    '5 mins',
    '1 hr',
    '10 sec',
    's',
    '0.5ms',
    '1.5.0s',
    '1 s s',
    'Infinity',
    0,
    -1,
    0.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    2 ** 60,
    '1000000000000000000d',
    null,
    undefined,
    true,
    [1000],
    { ms: 1000 },
  ])('%p is rejected with ERR_SLUICE_INVALID_DURATION naming the option and every accepted form', (value) => {
    expect(() => parseDuration(value, 'policies[0].window')).toThrow(SluiceConfigError);
    expect(() => parseDuration(value, 'policies[0].window')).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_DURATION, option: 'policies[0].window' }),
    );
    expect(() => parseDuration(value, 'w')).toThrow(
      /ms, s, m, h, d, or millisecond\(s\), second\(s\), minute\(s\), hour\(s\), day\(s\)/,
    );
  });

  it.each([
    [250, '250ms'],
    [1000, '1s'],
    [90_000, '90s'],
    [900_000, '15m'],
    [3_600_000, '1h'],
    [129_600_000, '36h'],
    [86_400_000, '1d'],
    [1001, '1001ms'],
  ])('%d ms is written %s (the largest exact unit)', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text, 'x')).toBe(ms);
  });
});

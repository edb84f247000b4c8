import { describeValue, ErrorCodes, SluiceConfigError } from './errors.js';

/** Milliseconds as a number, or a string such as '250ms', '1s', '10 s', '15 minutes', '1h', '1d'. */
export type Duration = number | string;

/** Every unit a duration string may name: a short one, or the word, singular or plural. */
const UNIT_MS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1_000,
  second: 1_000,
  seconds: 1_000,
  m: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** A whole number, optional spaces, a unit (any case): '250ms', '10 s', '15 minutes', '1 hour', '1d'. */
const PATTERN = /^(\d+) *([a-z]+)$/i;

/** What the error says is accepted: every form, so a user need not guess. */
const FORMS =
  "a positive whole number of milliseconds, or a string of a whole number, optional spaces and a unit in any case: ms, s, m, h, d, or millisecond(s), second(s), minute(s), hour(s), day(s) (such as '250ms', '10 s', '15 minutes', '1h', '1 day')";

/** Parses a duration option into whole, positive milliseconds, or throws naming `option`. */
export function parseDuration(value: unknown, option: string): number {
  let ms: number | undefined;
  if (typeof value === 'number') ms = value;
  else if (typeof value === 'string') {
    const match = PATTERN.exec(value.trim());
    const unit = match ? UNIT_MS[match[2]!.toLowerCase()] : undefined;
    if (match && unit !== undefined) ms = Number(match[1]) * unit;
  }
  // Safe integers only: a window past 2^53 ms could not be counted exactly (and is a typo anyway).
  if (ms === undefined || !Number.isSafeInteger(ms) || ms <= 0) {
    throw new SluiceConfigError(
      ErrorCodes.INVALID_DURATION,
      option,
      `expected ${FORMS}; got ${describeValue(value)}`,
    );
  }
  return ms;
}

const LABELS: ReadonlyArray<readonly [string, number]> = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

/** The duration in its largest exact unit: 900000 -> '15m', 250 -> '250ms'. */
export function formatDuration(ms: number): string {
  for (const [label, size] of LABELS) {
    if (ms % size === 0) return `${ms / size}${label}`;
  }
  return `${ms}ms`;
}

/**
 * The one traffic trace every chart is drawn from, as ms offsets from the start of a window:
 * a burst, steady traffic four times above the limit, a pause, and a second burst.
 */

/** Every algorithm gets the same policy: 10 per 10 s. */
export const LIMIT = 10;
export const WINDOW_MS = 10_000;
/** The charts show the first 40 s. */
export const HORIZON_MS = 40_000;
/** How long a request stays in flight, for the concurrency policy (the other algorithms ignore it). */
export const HOLD_MS = 2_000;

/** `count` requests starting at `from`, `gapMs` apart. */
function run(from, count, gapMs) {
  return Array.from({ length: count }, (_, i) => from + i * gapMs);
}

/** Arrival times, ascending. */
export const ARRIVALS = Object.freeze([
  ...run(8_000, 15, 50), // a burst of 15 just before the first window boundary
  ...run(10_000, 56, 250), // 4 per second for 14 s: four times the limit
  // a pause from 24 s to 32 s
  ...run(32_000, 15, 50), // a second burst
]);

export const TRACE_SUMMARY =
  'a burst of 15 at 8 s, 4 per second from 10 s to 24 s, a pause, a burst of 15 at 32 s';

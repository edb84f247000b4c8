import { MemoryStore } from '@sluice/core';

/**
 * The start of a day (1_699_920_000_000 ms since the epoch): every window up to a day starts there, so
 * RateLimit fields read as at the start of a window.
 */
export const STILL_NOW = 1_699_920_000_000;

/** A clock that stands still at STILL_NOW. */
export const stillClock = (): number => STILL_NOW;

/**
 * A MemoryStore on a clock that stands still: no window rolls over and no bucket refills during the
 * test, however slowly a loaded machine runs it (on the wall clock a fixed window that rolled over
 * between two requests started the count again).
 */
export function stillStore(): MemoryStore {
  return new MemoryStore({ clock: stillClock });
}

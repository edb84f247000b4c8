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

/**
 * Runs `burst(0)`, and `burst(1)` (for a subject of its own) when the first began and ended in two
 * windows of `windowMs` (aligned to the epoch, as Sluice's are). Where the clock is the wall's (an
 * example's own store, a runtime's), a burst that a loaded machine spread across a boundary is decided
 * by two windows: CI on 3a9dfa8 saw a sliding window of a minute admit 101 of 101 through workerd. The
 * second attempt starts just past a boundary: only a burst longer than a window crosses one again.
 */
export async function inOneWindow<T>(windowMs: number, burst: (attempt: number) => Promise<T>): Promise<T> {
  const began = Date.now();
  const first = await burst(0);
  if (Math.floor(began / windowMs) === Math.floor(Date.now() / windowMs)) return first;
  return burst(1);
}

/** Holds the event loop for `ms`, as a long synchronous task (or a process the machine starved) does. */
export function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // held
  }
}

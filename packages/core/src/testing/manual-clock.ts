/** A clock that moves only when told: algorithm tests never sleep. */
export interface ManualClock {
  (): number;
  /** Moves the clock forward by `ms` and returns the new time. */
  advance(ms: number): number;
  /** Sets the clock. */
  set(ms: number): number;
}

export function manualClock(start = 1_700_000_000_000): ManualClock {
  let now = start;
  const clock = (() => now) as ManualClock;
  clock.advance = (ms) => {
    now += ms;
    return now;
  };
  clock.set = (ms) => {
    now = ms;
    return now;
  };
  return clock;
}

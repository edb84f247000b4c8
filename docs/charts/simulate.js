import { ARRIVALS, HOLD_MS, LIMIT, WINDOW_MS } from './trace.js';

/** A multiple of WINDOW_MS, so fixed windows start at 0 s, 10 s, 20 s, … of the chart. */
const START = 1_700_000_000_000;

/**
 * Feeds the trace to a real limiter of `algorithm` on a MemoryStore driven by a manual clock.
 * `core` is @sluice/core (the built package for `pnpm docs:charts`, the sources under Jest).
 * Returns one entry per arrival: when it arrived, whether it was admitted, and when it went through
 * (arrival plus the leaky bucket's delay).
 */
export async function simulate(core, algorithm) {
  let now = START;
  const store = new core.MemoryStore({ clock: () => now });
  const limiter = core.createLimiter({ limit: LIMIT, window: WINDOW_MS, algorithm, store });
  /** Leases to end, for the concurrency policy, in time order. */
  const releases = [];
  const results = [];
  for (const at of ARRIVALS) {
    for (let next = releases[0]; next !== undefined && next.time <= at; next = releases[0]) {
      releases.shift();
      now = START + next.time;
      await next.release();
    }
    now = START + at;
    const decision = await limiter.consume('client');
    const delayMs = decision.delayMs ?? 0;
    results.push({ at, allowed: decision.allowed, passedAt: at + delayMs, delayMs });
    if (decision.release) releases.push({ time: at + HOLD_MS, release: decision.release });
  }
  return results;
}

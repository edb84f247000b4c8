import { type Algorithm, type State, tooCostly } from '../algorithm.js';
import lua from './sliding-log.lua';

/**
 * State: [t1, c1, t2, c2, ...], entries in time order, each stored once with its cost (calls in the
 * same millisecond share one entry). Every entry has cost >= 1, so a subject never holds more than
 * `limit` entries.
 */
export const slidingLog: Algorithm = {
  name: 'sliding-log',
  code: 'sl',
  lua,
  step(state, now, cost, { limit, windowMs }) {
    const from = live(state, now - windowMs);
    let used = 0;
    for (let i = from; i < (state?.length ?? 0); i += 2) used += state![i + 1]!;
    const newest = state !== undefined && state.length > from ? state[state.length - 2]! : undefined;
    const resetMs = newest === undefined ? 0 : newest + windowMs - now;
    const expiresAt = newest === undefined ? now : newest + windowMs;
    if (cost > limit) return tooCostly(state, limit - used, resetMs, expiresAt);
    if (used + cost <= limit) {
      // cost 0 observes without recording (the uncharged view of a call that was not committed).
      if (cost === 0)
        return {
          allowed: true,
          next: state,
          remaining: limit - used,
          resetMs,
          retryAfterMs: 0,
          delayMs: 0,
          expiresAt,
        };
      const next: State = state === undefined ? [] : state.slice(from);
      if (newest === now) next[next.length - 1]! += cost;
      else next.push(now, cost);
      return {
        allowed: true,
        next,
        remaining: limit - used - cost,
        resetMs: windowMs,
        retryAfterMs: 0,
        delayMs: 0,
        expiresAt: now + windowMs,
      };
    }
    // Wait until the oldest entries have left the window and freed enough.
    let freed = 0;
    let i = from;
    while (used - freed + cost > limit) {
      freed += state![i + 1]!;
      i += 2;
    }
    return {
      allowed: false,
      next: state,
      remaining: limit - used,
      resetMs,
      retryAfterMs: state![i - 2]! + windowMs - now,
      delayMs: 0,
      expiresAt,
    };
  },
  refund(state, now, { cost, chargedAt }, { windowMs }) {
    if (state === undefined) return { next: state, expiresAt: now };
    const next = state.slice();
    for (let i = 0; i < next.length; i += 2) {
      if (next[i] !== chargedAt) continue;
      next[i + 1]! -= cost;
      if (next[i + 1]! <= 0) next.splice(i, 2);
      break;
    }
    return { next, expiresAt: next.length > 0 ? next[next.length - 2]! + windowMs : now };
  },
};

/** Index of the first entry still inside the window (entries at or before `oldest` have left). */
function live(state: State | undefined, oldest: number): number {
  if (state === undefined) return 0;
  let i = 0;
  while (i < state.length && state[i]! <= oldest) i += 2;
  return i;
}

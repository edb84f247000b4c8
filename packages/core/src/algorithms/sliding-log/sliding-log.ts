import { type Algorithm, sized, tooCostly } from '../algorithm.js';
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
  step(slot, at, now, cost, { limit, windowMs }, _leaseId, next) {
    const end = slot === undefined ? at : slot.length;
    let from = at;
    // Entries at or before now - windowMs have left the window.
    while (from < end && slot![from]! <= now - windowMs) from += 2;
    let used = 0;
    for (let i = from; i < end; i += 2) used += slot![i + 1]!;
    const newest = end > from ? slot![end - 2]! : undefined;
    const resetMs = newest === undefined ? 0 : newest + windowMs - now;
    const expiresAt = newest === undefined ? now : newest + windowMs;
    if (cost > limit) return tooCostly(limit - used, resetMs, expiresAt);
    if (used + cost <= limit) {
      // cost 0 observes without recording (the uncharged view of a call that was not committed).
      if (cost === 0)
        return {
          allowed: true,
          remaining: limit - used,
          resetMs,
          retryAfterMs: 0,
          delayMs: 0,
          expiresAt,
        };
      const kept = end - from;
      sized(next, newest === now ? kept : kept + 2);
      for (let i = 0; i < kept; i++) next[i] = slot![from + i]!;
      if (newest === now) next[kept - 1]! += cost;
      else {
        next[kept] = now;
        next[kept + 1] = cost;
      }
      return {
        allowed: true,
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
      freed += slot![i + 1]!;
      i += 2;
    }
    return {
      allowed: false,
      remaining: limit - used,
      resetMs,
      retryAfterMs: slot![i - 2]! + windowMs - now,
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

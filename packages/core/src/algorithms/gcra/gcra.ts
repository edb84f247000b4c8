import { type Algorithm, idiv, sized, tooCostly } from '../algorithm.js';
import lua from './gcra.lua';

/**
 * The generic cell rate algorithm, kept in exact integers.
 *
 * The theoretical arrival time is stored as [anchorMs, units], meaning anchorMs + units / limit, with
 * 0 <= units < limit. Scaled by `limit`, the emission interval T = windowMs / limit is windowMs and the
 * capacity burst * T is burst * windowMs, so `max(tat, now) + cost*T - now <= burst*T` is a comparison
 * of integers.
 */
export const gcra: Algorithm = {
  name: 'gcra',
  code: 'gc',
  lua,
  step(slot, at, now, cost, { limit, windowMs: w, burst }, _leaseId, next) {
    // (max(tat, now) - now) * limit: how far the schedule runs ahead of now.
    const ahead = slot === undefined ? 0 : Math.max(0, (slot[at]! - now) * limit + slot[at + 1]!);
    const capacity = burst * w;
    const waitMs = ceilDiv(ahead, limit);
    if (cost > burst) return tooCostly(Math.max(0, idiv(capacity - ahead, w)), waitMs, now + waitMs);
    const after = ahead + cost * w;
    if (after <= capacity) {
      const anchor = idiv(after, limit);
      sized(next, 2);
      next[0] = now + anchor;
      next[1] = after - anchor * limit;
      const resetMs = ceilDiv(after, limit);
      return {
        allowed: true,
        remaining: idiv(capacity - after, w),
        resetMs,
        retryAfterMs: 0,
        delayMs: waitMs,
        expiresAt: now + resetMs,
      };
    }
    return {
      allowed: false,
      remaining: Math.max(0, idiv(capacity - ahead, w)),
      resetMs: waitMs,
      retryAfterMs: ceilDiv(after - capacity, limit),
      delayMs: 0,
      expiresAt: now + waitMs,
    };
  },
  refund(state, now, { cost, chargedAt }, { limit, windowMs: w }) {
    if (state === undefined) return { next: state, expiresAt: now };
    // Move the schedule back by what may still be held of the charge: cost * T less the time since it
    // was made (that much of it may have refilled already), so a refund never lifts the bucket above
    // what it would hold without the charge. A schedule behind now is simply a full bucket.
    const units = state[1]! - Math.max(0, cost * w - Math.max(0, now - chargedAt) * limit);
    const shift = idiv(units, limit);
    const anchor = state[0]! + shift;
    const rest = units - shift * limit;
    return { next: [anchor, rest], expiresAt: anchor + (rest > 0 ? 1 : 0) };
  },
};

/** Ceiling division of integers (b > 0). */
export function ceilDiv(a: number, b: number): number {
  return -idiv(-a, b);
}

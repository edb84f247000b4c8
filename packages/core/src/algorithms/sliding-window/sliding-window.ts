import { type Algorithm, idiv, sized, tooCostly } from '../algorithm.js';
import lua from './sliding-window.lua';

/**
 * State: [windowIndex, current, previous]. The estimate `prev * (W - elapsed) / W + curr` is compared
 * multiplied by W, so every comparison is between integers and the retry time is exact.
 */
export const slidingWindow: Algorithm = {
  name: 'sliding-window',
  code: 'sw',
  lua,
  step(slot, at, now, cost, { limit, windowMs: w }, _leaseId, next) {
    const index = idiv(now, w);
    const start = index * w;
    let curr = 0;
    let prev = 0;
    if (slot !== undefined) {
      if (slot[at] === index) {
        curr = slot[at + 1]!;
        prev = slot[at + 2]!;
      } else if (slot[at] === index - 1) prev = slot[at + 1]!;
    }
    const end = start + w;
    const resetMs = end - now;
    // The estimate times W: prev * (W - elapsed) + curr * W.
    const scaled = prev * (end - now) + curr * w;
    if (cost > limit) return tooCostly(Math.max(0, idiv(limit * w - scaled, w)), resetMs, end + w);
    if (scaled + cost * w <= limit * w) {
      sized(next, 3);
      next[0] = index;
      next[1] = curr + cost;
      next[2] = prev;
      const remaining = Math.max(0, idiv(limit * w - scaled - cost * w, w));
      return { allowed: true, remaining, resetMs, retryAfterMs: 0, delayMs: 0, expiresAt: end + w };
    }
    let allowedAt: number;
    const room = (limit - curr - cost) * w;
    if (room >= 0) {
      // Denied with room left means prev > 0: wait until enough of it has slid out of the window.
      allowedAt = end - idiv(room, prev);
    } else {
      // curr + cost > limit: in the next window curr becomes the previous count and slides out in turn.
      allowedAt = end + w - idiv((limit - cost) * w, curr);
    }
    return {
      allowed: false,
      remaining: Math.max(0, idiv(limit * w - scaled, w)),
      resetMs,
      retryAfterMs: allowedAt - now,
      delayMs: 0,
      expiresAt: end + w,
    };
  },
  refund(state, _now, { cost, chargedAt }, { windowMs: w }) {
    if (state === undefined) return { next: state, expiresAt: 0 };
    const index = idiv(chargedAt, w);
    const expiresAt = (state[0]! + 2) * w;
    if (state[0] === index) return { next: [index, Math.max(0, state[1]! - cost), state[2]!], expiresAt };
    if (state[0] === index + 1)
      return { next: [state[0], state[1]!, Math.max(0, state[2]! - cost)], expiresAt };
    return { next: state, expiresAt };
  },
};

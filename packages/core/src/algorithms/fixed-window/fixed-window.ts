import { type Algorithm, idiv, sized, tooCostly } from '../algorithm.js';
import lua from './fixed-window.lua';

/** State: [windowIndex, count]. Windows are aligned to multiples of windowMs since the epoch. */
export const fixedWindow: Algorithm = {
  name: 'fixed-window',
  code: 'fw',
  lua,
  step(slot, at, now, cost, { limit, windowMs }, _leaseId, next) {
    const index = idiv(now, windowMs);
    const count = slot !== undefined && slot[at] === index ? slot[at + 1]! : 0;
    const end = (index + 1) * windowMs;
    const resetMs = end - now;
    if (cost > limit) return tooCostly(limit - count, resetMs, end);
    if (count + cost > limit) {
      // The next window starts empty, and cost <= limit fits there.
      return {
        allowed: false,
        remaining: limit - count,
        resetMs,
        retryAfterMs: resetMs,
        delayMs: 0,
        expiresAt: end,
      };
    }
    sized(next, 2);
    next[0] = index;
    next[1] = count + cost;
    return {
      allowed: true,
      remaining: limit - count - cost,
      resetMs,
      retryAfterMs: 0,
      delayMs: 0,
      expiresAt: end,
    };
  },
  refund(state, _now, { cost, chargedAt }, { windowMs }) {
    const index = idiv(chargedAt, windowMs);
    if (state === undefined || state[0] !== index)
      return { next: state, expiresAt: (state?.[0] ?? 0) * windowMs + windowMs };
    return { next: [index, Math.max(0, state[1]! - cost)], expiresAt: (index + 1) * windowMs };
  },
};

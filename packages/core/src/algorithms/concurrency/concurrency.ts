import { type Algorithm, type State, sized, tooCostly } from '../algorithm.js';
import lua from './concurrency.lua';

/**
 * State: [expiresAt1, cost1, leaseId1, ...], leases in order of expiry. A lease leaves when released
 * (refund) or when it expires `windowMs` after it was taken, so a crashed holder cannot pin the limit.
 */
export const concurrency: Algorithm = {
  name: 'concurrency',
  code: 'cc',
  lua,
  step(slot, at, now, cost, { limit, windowMs }, leaseId, next) {
    let from = at;
    let held = 0;
    const end = slot === undefined ? at : slot.length;
    while (from < end && slot![from]! <= now) from += 3;
    for (let i = from; i < end; i += 3) held += slot![i + 1]!;
    const expiresAt = end > from ? slot![end - 3]! : now;
    if (cost > limit) return tooCostly(limit - held, 0, expiresAt);
    if (held + cost <= limit) {
      // cost 0 observes without taking a lease (the uncharged view of a call that was not committed).
      if (cost === 0)
        return {
          allowed: true,
          remaining: limit - held,
          resetMs: 0,
          retryAfterMs: 0,
          delayMs: 0,
          expiresAt,
        };
      const kept = end - from;
      sized(next, kept + 3);
      for (let i = 0; i < kept; i++) next[i] = slot![from + i]!;
      next[kept] = now + windowMs;
      next[kept + 1] = cost;
      next[kept + 2] = leaseId;
      return {
        allowed: true,
        remaining: limit - held - cost,
        resetMs: 0,
        retryAfterMs: 0,
        delayMs: 0,
        expiresAt: now + windowMs,
      };
    }
    // With no other traffic, leases leave only by expiring: wait for the oldest to free enough.
    let freed = 0;
    let i = from;
    while (held - freed + cost > limit) {
      freed += slot![i + 1]!;
      i += 3;
    }
    return {
      allowed: false,
      remaining: limit - held,
      resetMs: 0,
      retryAfterMs: slot![i - 3]! - now,
      delayMs: 0,
      expiresAt,
    };
  },
  refund(state, now, { leaseId }) {
    if (state === undefined) return { next: state, expiresAt: now };
    const next: State = [];
    for (let i = 0; i < state.length; i += 3) {
      if (state[i + 2] !== leaseId && state[i]! > now) next.push(state[i]!, state[i + 1]!, state[i + 2]!);
    }
    return { next, expiresAt: next.length > 0 ? next[next.length - 3]! : now };
  },
};

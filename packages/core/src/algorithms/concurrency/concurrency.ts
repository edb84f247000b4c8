import { type Algorithm, type State, tooCostly } from '../algorithm.js';
import lua from './concurrency.lua';

/**
 * State: [expiresAt1, cost1, leaseId1, ...], leases in order of expiry. A lease leaves when released
 * (refund) or when it expires `windowMs` after it was taken, so a crashed holder cannot pin the limit.
 */
export const concurrency: Algorithm = {
  name: 'concurrency',
  code: 'cc',
  lua,
  step(state, now, cost, { limit, windowMs }, leaseId) {
    let from = 0;
    let held = 0;
    const length = state?.length ?? 0;
    while (from < length && state![from]! <= now) from += 3;
    for (let i = from; i < length; i += 3) held += state![i + 1]!;
    const expiresAt = length > from ? state![length - 3]! : now;
    if (cost > limit) return tooCostly(state, limit - held, 0, expiresAt);
    if (held + cost <= limit) {
      // cost 0 observes without taking a lease (the uncharged view of a call that was not committed).
      if (cost === 0)
        return {
          allowed: true,
          next: state,
          remaining: limit - held,
          resetMs: 0,
          retryAfterMs: 0,
          delayMs: 0,
          expiresAt,
        };
      const next: State = state === undefined ? [] : state.slice(from);
      next.push(now + windowMs, cost, leaseId);
      return {
        allowed: true,
        next,
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
      freed += state![i + 1]!;
      i += 3;
    }
    return {
      allowed: false,
      next: state,
      remaining: limit - held,
      resetMs: 0,
      retryAfterMs: state![i - 3]! - now,
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

import type { PolicyOutcome, StoreLimiter } from '@sluice/core';
import { algorithms } from '../../src/algorithms/index.js';
import { policyNamespace } from '../../src/keys.js';

/** A store-level limiter of one subject-scoped window policy, for tests that call a store directly. */
export function windowLimiter(
  algorithm: 'sliding-window' | 'fixed-window',
  prefix: string,
  name: string,
  limit: number,
  windowMs: number,
): StoreLimiter {
  return {
    prefix,
    name,
    policies: [
      {
        algorithm: algorithms[algorithm],
        params: { limit, windowMs, burst: limit },
        scope: 'subject',
        namespace: policyNamespace(prefix, name, 'p', algorithms[algorithm].code),
      },
    ],
  };
}

/** What a store reports of each policy (the memory store's steps also carry fields a decision never reads). */
export function reported(steps: readonly PolicyOutcome[]): PolicyOutcome[] {
  return steps.map(({ allowed, remaining, resetMs, retryAfterMs, delayMs }) => ({
    allowed,
    remaining,
    resetMs,
    retryAfterMs,
    delayMs,
  }));
}

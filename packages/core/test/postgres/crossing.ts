import { createLimiter, type Policy, type Store } from '@sluice/core';

/**
 * Calls that share rows, locking them in opposite orders if a store took the limiter's order: three
 * limiters of one name whose policies are the same but listed in other orders (so their keys are the
 * same), with global policies every call shares and a policy whose rows expire every 20 ms (so the
 * sweep deletes rows other calls are about to lock), over a handful of subjects, for `durationMs`.
 */
export interface Crossing {
  readonly prefix: string;
  readonly durationMs: number;
  /** Calls in flight at once per process. */
  readonly inFlight: number;
}

export interface CrossingResult {
  calls: number;
  /** Decided without the store (a failure or timeout): must stay 0. */
  degraded: number;
  errors: string[];
}

const policies: Policy[] = [
  { name: 'a', limit: 1_000_000, window: '1h', algorithm: 'sliding-window' },
  { name: 'b', limit: 1_000_000, window: '1h', algorithm: 'token-bucket', scope: 'global' },
  // Rows that expire as the calls go: the sweep deletes them while other calls wait to lock them.
  { name: 'c', limit: 1_000_000, window: '20ms', algorithm: 'fixed-window' },
  { name: 'd', limit: 1_000_000, window: '1h', algorithm: 'gcra', scope: 'global' },
];

export async function crossKeys(
  store: Store,
  { prefix, durationMs, inFlight }: Crossing,
): Promise<CrossingResult> {
  const options = { prefix, name: 'crossing', store, storeTimeout: '30s', onStoreError: 'deny' as const };
  const limiters = [
    createLimiter({ ...options, policies }),
    createLimiter({ ...options, policies: [...policies].reverse() }),
    createLimiter({ ...options, policies: [policies[2]!, policies[1]!, policies[3]!, policies[0]!] }),
  ];
  const result: CrossingResult = { calls: 0, degraded: 0, errors: [] };
  const until = Date.now() + durationMs;
  const worker = async (w: number) => {
    for (let i = w; Date.now() < until; i++) {
      try {
        const decision = await limiters[i % limiters.length]!.consume(`s${i % 3}`);
        result.calls++;
        if (decision.degraded) result.degraded++;
      } catch (error) {
        result.errors.push(String(error));
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, (_, w) => worker(w)));
  return result;
}

import { type AlgorithmName, MemoryStore, type Policy } from '@sluice/core';
import type { TraceStep } from '@sluice/core/testing';
import fc from '../../../test/support/fast-check.js';
import { bucketAlgorithms } from '../src/algorithms/index.js';

/** Property tests run on 2 shared cores: enough cases to find a wrong boundary, few enough to stay fast. */
export const NUM_RUNS = 120;

/**
 * A policy of `algorithm` with small numbers: windows of a few ms make every edge (window ends, refill
 * steps, expiries) happen within a short trace, and keep the reference's brute-force retry search cheap.
 */
export function policyOf(algorithm: AlgorithmName, extra: Partial<Policy> = {}): fc.Arbitrary<Policy> {
  const bucket = bucketAlgorithms.has(algorithm);
  return fc
    .record({
      limit: fc.integer({ min: 1, max: 8 }),
      window: fc.integer({ min: 1, max: 40 }),
      burst: bucket ? fc.integer({ min: 1, max: 12 }) : fc.constant(undefined),
    })
    .map(({ limit, window, burst }) => {
      const policy: Policy = { limit, window, algorithm, ...extra };
      if (burst !== undefined) policy.burst = burst;
      return policy;
    });
}

export interface TraceShape {
  subjects?: readonly string[];
  /** Largest cost drawn; a little above capacity so "too costly" calls happen too. */
  maxCost: number;
  /** Time steps are drawn up to this; a few times the window so windows and buckets roll over. */
  maxAdvanceMs: number;
  /** Allow reset, refund and release steps. */
  withGiveBacks?: boolean;
  /** Weight of refund and release steps against 8 for consumes and peeks (default 2). */
  giveBackWeight?: number;
  minLength?: number;
  maxLength?: number;
}

/** Random traces: bursts (advance 0), small steps, and steps past whole windows. */
export function traceOf(shape: TraceShape): fc.Arbitrary<TraceStep[]> {
  const { subjects = ['a', 'b'], maxCost, maxAdvanceMs, withGiveBacks = false, maxLength = 40 } = shape;
  const { giveBackWeight = 2, minLength = 1 } = shape;
  const advanceMs = fc.oneof(
    fc.constant(0),
    fc.integer({ min: 0, max: Math.max(1, Math.ceil(maxAdvanceMs / 8)) }),
    fc.integer({ min: 0, max: maxAdvanceMs }),
  );
  const subject = fc.constantFrom(...subjects);
  const cost = fc.oneof(
    { weight: 4, arbitrary: fc.constant(1) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: maxCost }) },
  );
  const call = fc.record({
    op: fc.oneof({ weight: 5, arbitrary: fc.constant('consume' as const) }, fc.constant('peek' as const)),
    advanceMs,
    subject,
    cost,
  });
  const giveBack = fc.record({
    op: fc.constantFrom('refund' as const, 'release' as const),
    advanceMs,
    of: fc.nat(),
  });
  // Some resets come from another limiter object on the same store (another process, an admin tool).
  const reset = fc.record({ op: fc.constant('reset' as const), advanceMs, subject, elsewhere: fc.boolean() });
  const step: fc.Arbitrary<TraceStep> = withGiveBacks
    ? fc.oneof(
        { weight: 8, arbitrary: call },
        { weight: giveBackWeight, arbitrary: giveBack },
        { weight: 1, arbitrary: reset },
      )
    : call;
  return fc.array(step, { minLength, maxLength }).map((trace) =>
    // A refund or release points at an earlier step (what it points at may be a peek: then it does nothing).
    trace.map((s, i) => ('of' in s ? { ...s, of: i === 0 ? 0 : s.of % i } : s)),
  );
}

/** Window alignment varies with the start time. */
export const startOf = fc.integer({ min: 1_700_000_000_000, max: 1_700_000_100_000 });

/**
 * One MemoryStore per manual clock: a trace's resets `elsewhere` build a second limiter with the same
 * clock, and it must count on the same store.
 */
const storesByClock = new WeakMap<object, MemoryStore>();
export function storeOf(clock: () => number): MemoryStore {
  let store = storesByClock.get(clock);
  if (store === undefined) {
    store = new MemoryStore({ clock });
    storesByClock.set(clock, store);
  }
  return store;
}

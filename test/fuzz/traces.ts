import type { AlgorithmName, Decision, LimiterOptions, Policy } from '@sluice/core';
import { createLimiter } from '@sluice/core';
import { type ManualClock, runTrace, type TraceStep } from '@sluice/core/testing';
import { policyOf, startOf, traceOf } from '../../packages/core/test/arbitraries.js';
import fc from '../support/fast-check.js';
import { firstBreach } from './guarantees.js';

/**
 * The never-over-the-limit property, for any store: random policies (one, or several decided
 * together, subject or global scope) and random traces of consumes, peeks, refunds, releases and resets on a manual
 * clock; every admitted call must keep every policy's promise (guarantees.ts).
 */
export const ALGORITHMS: readonly AlgorithmName[] = [
  'fixed-window',
  'sliding-window',
  'sliding-log',
  'token-bucket',
  'leaky-bucket',
  'gcra',
  'concurrency',
];

/**
 * Random traces with every kind of step: refunds, releases and resets give quota back, as far as each
 * may. `refunds: 'many'` makes give-backs as common as calls, on one subject, with short time steps:
 * refunds that land after the refill has covered part of their charge, with calls in between.
 */
export function guardedTrace(maxLength = 60, refunds: 'some' | 'many' = 'some'): fc.Arbitrary<TraceStep[]> {
  const many = refunds === 'many';
  return traceOf({
    maxCost: 14,
    maxAdvanceMs: many ? 16 : 120,
    withGiveBacks: true,
    giveBackWeight: many ? 8 : 2,
    subjects: many ? ['a'] : undefined,
    minLength: many ? 24 : 1,
    maxLength,
  });
}

const scoped = (algorithm: AlgorithmName): fc.Arbitrary<Policy> =>
  fc
    .tuple(policyOf(algorithm), fc.constantFrom('subject' as const, 'global' as const))
    .map(([policy, scope]) => ({ ...policy, scope }));

export const onePolicy = (algorithm: AlgorithmName): fc.Arbitrary<Policy[]> =>
  scoped(algorithm).map((p) => [p]);

/** Two or three policies of any algorithms, named apart. */
export const severalPolicies: fc.Arbitrary<Policy[]> = fc
  .array(fc.constantFrom(...ALGORITHMS), { minLength: 2, maxLength: 3 })
  .chain((names) => fc.tuple(...names.map(scoped)))
  .map((policies) => policies.map((p, i) => ({ ...p, name: `p${i}` })));

/** A decision that contradicts itself, as a message; undefined when it is coherent. */
function incoherent(
  decision: Omit<Decision, 'refund' | 'release'>,
  policies: readonly Policy[],
): string | undefined {
  if (decision.policies.length !== policies.length) return `${decision.policies.length} policy states`;
  if (decision.allowed !== decision.policies.every((p) => p.allowed))
    return 'allowed is not all policies allowing';
  if (decision.allowed ? decision.retryAfterMs !== 0 : !(decision.retryAfterMs > 0)) {
    return `retryAfterMs ${decision.retryAfterMs} on an ${decision.allowed ? 'allowed' : 'denied'} decision`;
  }
  for (const p of decision.policies) {
    if (!(p.remaining >= 0) || !Number.isInteger(p.remaining)) return `remaining ${p.remaining} in ${p.name}`;
  }
  return undefined;
}

/** Where a run's counters live: a fresh store, or a fresh prefix on a shared one, reading `clock`. */
export type Placement = (clock: ManualClock) => Pick<LimiterOptions, 'store' | 'prefix' | 'storeTimeout'>;

/** The property itself, for the store that `place` builds. */
export function neverOverTheLimit(
  policies: fc.Arbitrary<Policy[]>,
  place: Placement,
  refunds: 'some' | 'many' = 'some',
): fc.IAsyncPropertyWithHooks<[Policy[], TraceStep[], number]> {
  return fc.asyncProperty(policies, guardedTrace(60, refunds), startOf, async (chosen, trace, start) => {
    // One placement per run: a reset `elsewhere` is made by a second limiter on the same store, named
    // as it shares the counters on purpose (ERR_SLUICE_NAME_REUSE).
    let options: LimiterOptions | undefined;
    const results = await runTrace(
      (clock) => {
        options ??= { name: 'trace', policies: chosen, ...place(clock) };
        return createLimiter(options);
      },
      trace,
      { start },
    );
    const breach = firstBreach(chosen, trace, results, start);
    if (breach !== undefined) throw new Error(breach);
    for (const [i, result] of results.entries()) {
      const why = result === null ? undefined : incoherent(result, chosen);
      if (why !== undefined) throw new Error(`step ${i}: ${why}`);
    }
  });
}

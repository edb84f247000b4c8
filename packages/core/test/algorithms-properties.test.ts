import { createLimiter, type Policy } from '@sluice/core';
import { manualClock, referenceTrace, runTrace } from '@sluice/core/testing';
import fc from '../../../test/support/fast-check.js';
import { allowWarnings } from '../../../test/support/warnings.js';
import { algorithmNames, bucketAlgorithms } from '../src/algorithms/index.js';
import { NUM_RUNS, policyOf, startOf, storeOf, traceOf } from './arbitraries.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');

/**
 * Every algorithm against its reference model (src/testing/reference-models.ts) over random traces:
 * the same decisions exactly (allowed, remaining, resetMs, retryAfterMs found by brute force, delayMs),
 * which implies the implementation never admits more than the reference allows.
 */

/** Named: a trace's resets `elsewhere` share the store and the counters on purpose (ERR_SLUICE_NAME_REUSE). */
const memoryLimiter = (policy: Policy) => (clock: ReturnType<typeof manualClock>) =>
  createLimiter({ name: 'trace', policies: [policy], store: storeOf(clock) });

function capacityOf(policy: Policy): number {
  return policy.burst ?? policy.limit;
}

describe.each(algorithmNames)('%s against its reference model', (algorithm) => {
  it('decides every random trace exactly as the reference does', async () => {
    const input = policyOf(algorithm).chain((policy) =>
      fc.tuple(
        fc.constant(policy),
        traceOf({
          maxCost: capacityOf(policy) + 1,
          maxAdvanceMs: 3 * Number(policy.window),
          withGiveBacks: true,
        }),
        startOf,
      ),
    );
    await fc.assert(
      fc.asyncProperty(input, async ([policy, trace, start]) => {
        const actual = await runTrace(memoryLimiter(policy), trace, { start });
        expect(actual).toEqual(referenceTrace({ policies: [policy] }, trace, { start }));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('keeps retryAfterMs honest and tight on random states', async () => {
    const input = policyOf(algorithm).chain((policy) =>
      fc.tuple(
        fc.constant(policy),
        traceOf({ maxCost: capacityOf(policy), maxAdvanceMs: 2 * Number(policy.window), subjects: ['a'] }),
        fc.integer({ min: 1, max: capacityOf(policy) }),
        startOf,
      ),
    );
    await fc.assert(
      fc.asyncProperty(input, async ([policy, trace, cost, start]) => {
        const clock = manualClock(start);
        const limiter = memoryLimiter(policy)(clock);
        for (const step of trace) {
          clock.advance(step.advanceMs);
          if (step.op === 'consume') await limiter.consume('a', { cost: step.cost ?? 1 });
        }
        const denied = await limiter.peek('a', { cost });
        if (denied.allowed) return;
        expect(Number.isFinite(denied.retryAfterMs)).toBe(true);
        expect(denied.retryAfterMs).toBeGreaterThan(0);
        clock.advance(denied.retryAfterMs - 1);
        expect((await limiter.peek('a', { cost })).allowed).toBe(false);
        clock.advance(1);
        expect((await limiter.peek('a', { cost })).allowed).toBe(true);
        expect((await limiter.consume('a', { cost })).allowed).toBe(true);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('bucket algorithms are one decision', () => {
  it('token-bucket, gcra and leaky-bucket without delay decide every trace alike', async () => {
    const input = policyOf('gcra').chain((policy) =>
      fc.tuple(
        fc.constant(policy),
        traceOf({ maxCost: capacityOf(policy) + 1, maxAdvanceMs: 3 * Number(policy.window) }),
        startOf,
      ),
    );
    await fc.assert(
      fc.asyncProperty(input, async ([policy, trace, start]) => {
        const runs = await Promise.all(
          [...bucketAlgorithms].map((algorithm) =>
            runTrace(
              memoryLimiter({
                ...policy,
                algorithm,
                name: 'p',
                ...(algorithm === 'leaky-bucket' ? { delay: false } : {}),
              }),
              trace,
              { start },
            ),
          ),
        );
        const view = (results: (typeof runs)[number]) =>
          results.map((d) => d && { ...d, policies: d.policies.map(({ algorithm: _a, ...p }) => p) });
        expect(view(runs[0]!)).toEqual(view(runs[1]!));
        expect(view(runs[2]!)).toEqual(view(runs[1]!));
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

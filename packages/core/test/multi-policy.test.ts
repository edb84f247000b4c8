import { createLimiter, type Decision, MemoryStore, type Policy } from '@sluice/core';
import { manualClock, referenceTrace, runTrace, type TraceStep } from '@sluice/core/testing';
import fc from '../../../test/support/fast-check.js';
import { allowWarnings } from '../../../test/support/warnings.js';
import { algorithmNames } from '../src/algorithms/index.js';
import { NUM_RUNS, policyOf, startOf, storeOf, traceOf } from './arbitraries.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');

/** Two or three policies of any algorithms, some of them global. */
const policiesArb = fc
  .array(
    fc
      .tuple(fc.constantFrom(...algorithmNames), fc.constantFrom('subject' as const, 'global' as const))
      .chain(([algorithm, scope]) => policyOf(algorithm, { scope })),
    { minLength: 2, maxLength: 3 },
  )
  .map((policies) => policies.map((p, i) => ({ ...p, name: `p${i}` })));

const scenarioArb = policiesArb.chain((policies) => {
  const longest = Math.max(...policies.map((p) => Number(p.window)));
  const capacity = Math.max(...policies.map((p) => p.burst ?? p.limit));
  return fc.tuple(
    fc.constant(policies),
    traceOf({
      subjects: ['a', 'b', 'c'],
      maxCost: capacity + 1,
      maxAdvanceMs: 3 * longest,
      withGiveBacks: true,
    }),
    startOf,
  );
});

/** Named: a trace's resets `elsewhere` share the store and the counters on purpose (ERR_SLUICE_NAME_REUSE). */
function memoryLimiter(policies: Policy[], clock: ReturnType<typeof manualClock>) {
  return createLimiter({ name: 'trace', policies, store: storeOf(clock) });
}

/** A decision without its functions. */
function data(d: Decision) {
  const { refund: _r, release: _l, ...rest } = d;
  return rest;
}

describe('several policies, decided together', () => {
  it('match the reference limiter on random traces (all-or-nothing, binding policy, global scope)', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ([policies, trace, start]) => {
        const actual = await runTrace((clock) => memoryLimiter(policies, clock), trace, { start });
        expect(actual).toEqual(referenceTrace({ policies }, trace, { start }));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('charge no policy on a denied call: every view is the same before and after it', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ([policies, trace, start]) => {
        const clock = manualClock(start);
        const limiter = memoryLimiter(policies, clock);
        const look = () => Promise.all(['a', 'b', 'c'].map(async (s) => data(await limiter.peek(s))));
        for (const step of trace) {
          clock.advance(step.advanceMs);
          if (step.op !== 'consume') continue;
          const before = await look();
          const decision = await limiter.consume(step.subject, { cost: step.cost ?? 1 });
          if (!decision.allowed) expect(await look()).toEqual(before);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('give an honest and tight retryAfterMs for the whole call', async () => {
    await fc.assert(
      fc.asyncProperty(
        scenarioArb,
        fc.integer({ min: 1, max: 3 }),
        async ([policies, trace, start], cost) => {
          const clock = manualClock(start);
          const limiter = memoryLimiter(policies, clock);
          for (const step of trace) {
            clock.advance(step.advanceMs);
            if (step.op === 'consume') await limiter.consume(step.subject, { cost: step.cost ?? 1 });
          }
          const denied = await limiter.peek('a', { cost });
          if (denied.allowed || denied.retryAfterMs === Number.POSITIVE_INFINITY) return;
          clock.advance(denied.retryAfterMs - 1);
          expect((await limiter.peek('a', { cost })).allowed).toBe(false);
          clock.advance(1);
          expect((await limiter.peek('a', { cost })).allowed).toBe(true);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('answer a trace with its denied calls left out exactly as the full trace', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ([policies, trace, start]) => {
        const factory = (clock: ReturnType<typeof manualClock>) => memoryLimiter(policies, clock);
        const full = await runTrace(factory, trace, { start });
        // Drop denied consumes, carrying their time steps over, and renumber what refunds point at.
        const kept: TraceStep[] = [];
        const indexOf = new Map<number, number>();
        let carry = 0;
        trace.forEach((step, i) => {
          if (step.op === 'consume' && full[i]?.allowed === false) {
            carry += step.advanceMs;
            return;
          }
          indexOf.set(i, kept.length);
          const moved = { ...step, advanceMs: step.advanceMs + carry };
          carry = 0;
          if ('of' in moved) moved.of = indexOf.get(moved.of) ?? kept.length;
          kept.push(moved);
        });
        const replay = await runTrace(factory, kept, { start });
        const expected = full.filter((_, i) => indexOf.has(i));
        expect(replay).toEqual(expected);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});

describe('binding policy', () => {
  const clock = manualClock(1_700_000_000_000);
  const limiter = createLimiter({
    policies: [
      { name: 'short', limit: 3, window: '1s', algorithm: 'fixed-window' },
      { name: 'long', limit: 5, window: '1m', algorithm: 'fixed-window' },
      { name: 'tie', limit: 3, window: '1h', algorithm: 'fixed-window' },
    ],
    store: new MemoryStore({ clock }),
  });

  it('is the policy with the least remaining when allowed (ties: the first)', async () => {
    clock.set(1_700_000_000_000);
    const d = await limiter.consume('x');
    expect(d).toMatchObject({ allowed: true, policy: 'short', limit: 3, remaining: 2 });
    expect(d.policies.map((p) => p.remaining)).toEqual([2, 4, 2]);
    expect(d.policies.map((p) => p.name)).toEqual(['short', 'long', 'tie']);
  });

  it('is the denying policy that denies longest when denied', async () => {
    await limiter.consume('x', { cost: 2 });
    clock.advance(1000);
    // short: fresh window; long: 2 left; tie: 0 left -> tie and long deny... tie for the longest
    const d = await limiter.consume('x', { cost: 3 });
    expect(d.allowed).toBe(false);
    expect(d.reason).toBe('limit');
    expect(d.policy).toBe('tie');
    expect(d.retryAfterMs).toBe(d.policies[2]!.resetMs);
    expect(d.policies.map((p) => p.allowed)).toEqual([true, false, false]);
    // The allowing policy reports its state as it stands: nothing was charged.
    expect(d.policies[0]!.remaining).toBe(3);
  });

  it('reports Infinity when the cost can never fit a policy', async () => {
    const d = await limiter.consume('y', { cost: 4 });
    expect(d).toMatchObject({ allowed: false, retryAfterMs: Number.POSITIVE_INFINITY });
    expect(['short', 'tie']).toContain(d.policy);
    expect((await limiter.peek('y')).policies.map((p) => p.remaining)).toEqual([3, 5, 3]);
  });
});

describe('global scope', () => {
  it('shares one counter across subjects beside per-subject policies', async () => {
    const clock = manualClock(1_700_000_000_000);
    const limiter = createLimiter({
      policies: [
        { name: 'per-user', limit: 2, window: '1m', algorithm: 'fixed-window' },
        { name: 'resource', limit: 5, window: '1m', algorithm: 'fixed-window', scope: 'global' },
      ],
      store: new MemoryStore({ clock }),
    });
    const allowed = async (s: string) => (await limiter.consume(s)).allowed;
    expect([await allowed('a'), await allowed('a'), await allowed('a')]).toEqual([true, true, false]);
    expect([await allowed('b'), await allowed('b')]).toEqual([true, true]);
    const d = await limiter.consume('c');
    expect(d).toMatchObject({ allowed: true, policy: 'resource', remaining: 0 });
    const full = await limiter.consume('d');
    expect(full).toMatchObject({ allowed: false, policy: 'resource' });
    expect(full.policies[0]).toMatchObject({ name: 'per-user', remaining: 2, allowed: true });
    // reset forgets the subject, not the shared counter.
    await limiter.reset('a');
    expect(await limiter.peek('a')).toMatchObject({ allowed: false, policy: 'resource' });
    expect((await limiter.peek('a')).policies[0]!.remaining).toBe(2);
    clock.advance(60_000);
    expect(await allowed('d')).toBe(true);
  });

  it('is shared by limiters with the same name on one store, and apart under other names', async () => {
    const clock = manualClock();
    const store = new MemoryStore({ clock });
    const policies: Policy[] = [{ limit: 2, window: '1s', scope: 'global' }];
    const one = createLimiter({ name: 'api', policies, store });
    const two = createLimiter({ name: 'api', policies, store });
    const other = createLimiter({ name: 'admin', policies, store });
    expect((await one.consume('a')).allowed).toBe(true);
    expect((await two.consume('b')).allowed).toBe(true);
    expect((await one.consume('c')).allowed).toBe(false);
    expect((await other.consume('c')).allowed).toBe(true);
  });
});

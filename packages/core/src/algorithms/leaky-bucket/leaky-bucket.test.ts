import { createLimiter, MemoryStore, type Policy } from '@sluice/core';
import { randomTrace, runTrace } from '@sluice/core/testing';
import { expectExactRetry, expectNothingCharged, harness } from '../../../test/harness.js';

// Requests leave one slot T = 100 ms apart; the bucket holds 4, counting the one leaving now.
const policy = { limit: 10, window: '1s', burst: 4, algorithm: 'leaky-bucket' } as const;

describe('leaky-bucket', () => {
  it('accepts `burst` at once from empty, the k-th delayed by (k - 1) * T, and rejects when full', () => {
    const h = harness(policy);
    const accepted = [1, 2, 3, 4].map(() => h.consume());
    expect(accepted.map((d) => d.allowed)).toEqual([true, true, true, true]);
    expect(accepted.map((d) => d.delayMs)).toEqual([0, 100, 200, 300]);
    expect(accepted.map((d) => d.remaining)).toEqual([3, 2, 1, 0]);
    const full = h.consume();
    expect(full).toMatchObject({ allowed: false, retryAfterMs: 100, resetMs: 400 });
    expect(full.delayMs).toBeUndefined();
    expectExactRetry(h, full);
    expect(h.consume()).toMatchObject({ allowed: true, delayMs: 300 });
  });

  it('drains one request per slot: resetMs is the time until it is empty', () => {
    const h = harness(policy);
    h.consume(3);
    expect(h.peek()).toMatchObject({ resetMs: 300, delayMs: 300, remaining: 1 });
    h.clock.advance(250);
    expect(h.peek()).toMatchObject({ resetMs: 50, delayMs: 50, remaining: 3 });
    h.clock.advance(50);
    expect(h.peek()).toMatchObject({ resetMs: 0, delayMs: 0, remaining: 4 });
  });

  it('charges cost > 1 as that many requests, nothing when rejected, and Infinity above burst', () => {
    const h = harness(policy);
    expect(h.consume(2)).toMatchObject({ allowed: true, delayMs: 0, remaining: 2 });
    expect(h.consume(2)).toMatchObject({ allowed: true, delayMs: 200, remaining: 0 });
    const denied = expectNothingCharged(h, 3);
    expect(denied.retryAfterMs).toBe(300);
    expectExactRetry(h, denied, 3);
    expect(expectNothingCharged(h, 5).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });

  it('with delay: false holds nothing and decides exactly as gcra with the same burst', async () => {
    const start = 1_700_000_000_123;
    const run = (p: Policy) =>
      Promise.all(
        [3, 4, 5].map((seed) =>
          runTrace(
            (clock) => createLimiter({ policies: [{ ...p, name: 'p' }], store: new MemoryStore({ clock }) }),
            randomTrace({ seed, length: 200, maxCost: 5, maxAdvanceMs: 500 }),
            { start },
          ),
        ),
      );
    const leaky = await run({ ...policy, delay: false });
    const gcra = await run({ ...policy, algorithm: 'gcra' });
    const withoutAlgorithm = (runs: typeof leaky) =>
      runs.map((r) => r.map((d) => d && { ...d, policies: d.policies.map(({ algorithm: _, ...p }) => p) }));
    expect(withoutAlgorithm(leaky)).toEqual(withoutAlgorithm(gcra));
    expect(leaky.flat().some((d) => d?.delayMs !== undefined)).toBe(false);
    expect(leaky.flat().filter((d) => d?.allowed === false).length).toBeGreaterThan(10);
  });
});

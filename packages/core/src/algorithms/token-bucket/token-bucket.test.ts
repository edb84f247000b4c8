import { createLimiter, MemoryStore } from '@sluice/core';
import { randomTrace, referenceTrace, runTrace } from '@sluice/core/testing';
import { expectExactRetry, expectNothingCharged, harness } from '../../../test/harness.js';

// 10 tokens per second: one every T = 100 ms, up to 5 held.
const policy = { limit: 10, window: '1s', burst: 5, algorithm: 'token-bucket' } as const;

describe('token-bucket', () => {
  it('starts full: a burst of `burst` at once, then one per refill interval', () => {
    const h = harness(policy);
    expect([1, 2, 3, 4, 5].map(() => h.consume().remaining)).toEqual([4, 3, 2, 1, 0]);
    const denied = h.consume();
    expect(denied).toMatchObject({ allowed: false, remaining: 0, resetMs: 500, retryAfterMs: 100 });
    expectExactRetry(h, denied);
    expect(h.consume().allowed).toBe(true);
    expect(h.consume().allowed).toBe(false);
  });

  it('refills continuously, floors remaining, and never holds more than burst', () => {
    const h = harness(policy);
    h.consume(5);
    h.clock.advance(250);
    expect(h.peek()).toMatchObject({ remaining: 2, resetMs: 250 });
    h.clock.advance(60_000);
    expect(h.peek()).toMatchObject({ remaining: 5, resetMs: 0 });
    expect(h.consume(5).allowed).toBe(true);
    expect(h.consume().allowed).toBe(false);
  });

  it('makes cost > 1 wait for that many tokens', () => {
    const h = harness(policy);
    h.consume(4);
    const denied = h.consume(3);
    expect(denied).toMatchObject({ remaining: 1, retryAfterMs: 200 });
    expectExactRetry(h, denied, 3);
  });

  it('allows a burst larger than the limit and rejects a cost above it with Infinity', () => {
    const h = harness({ limit: 2, window: '1s', burst: 6, algorithm: 'token-bucket' });
    expect(h.consume(6)).toMatchObject({ allowed: true, remaining: 0, resetMs: 3000 });
    expect(expectNothingCharged(h, 7).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });

  it('is exact when the refill interval is not a whole number of ms', () => {
    const h = harness({ limit: 3, window: 1000, algorithm: 'token-bucket' });
    h.consume(3);
    const denied = h.consume();
    // One token takes 333.3 ms: allowed at 334, not at 333.
    expect(denied.retryAfterMs).toBe(334);
    expectExactRetry(h, denied);
  });

  it('charges nothing for a rejected call', () => {
    const h = harness(policy);
    h.consume(3);
    expectNothingCharged(h, 3);
    expect(h.consume(2).allowed).toBe(true);
  });

  it('gives refunded tokens back, up to the capacity', async () => {
    const h = harness(policy);
    const d = h.consume(3);
    await d.refund!();
    expect(h.peek().remaining).toBe(5);
    const e = h.consume(2);
    h.clock.advance(150);
    await e.refund!();
    expect(h.peek().remaining).toBe(5);
  });

  it('decides like the classic tokens-and-timestamp bucket', async () => {
    const policies = [{ ...policy, name: 'p' }];
    for (let seed = 1; seed <= 20; seed++) {
      const trace = randomTrace({ seed, length: 150, maxCost: 6, maxAdvanceMs: 700 });
      const factory = (clock: () => number) => createLimiter({ policies, store: new MemoryStore({ clock }) });
      expect(await runTrace(factory, trace)).toEqual(referenceTrace({ policies }, trace));
    }
  });
});

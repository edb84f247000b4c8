import { ALIGNED, expectExactRetry, expectNothingCharged, harness, stepOf } from '../../../test/harness.js';
import { gcra } from './gcra.js';

// Emission interval T = 100 ms, capacity 3 * T.
const policy = { limit: 10, window: '1s', burst: 3, algorithm: 'gcra' } as const;

describe('gcra', () => {
  it('allows iff max(tat, now) + cost * T - now <= burst * T', () => {
    const h = harness(policy);
    expect([1, 2, 3].map(() => h.consume().remaining)).toEqual([2, 1, 0]);
    // tat = now + 300: one more needs tat + T - now <= 300, i.e. 100 ms.
    const denied = h.consume();
    expect(denied).toMatchObject({ allowed: false, remaining: 0, resetMs: 300, retryAfterMs: 100 });
    expectExactRetry(h, denied);
    h.consume();
    h.clock.advance(99);
    expect(h.consume().allowed).toBe(false);
    h.clock.advance(1);
    expect(h.consume().allowed).toBe(true);
  });

  it('makes cost > 1 wait for cost emission intervals of room, and charges nothing when denied', () => {
    const h = harness(policy);
    h.consume(2);
    h.clock.advance(50);
    const denied = expectNothingCharged(h, 2);
    // tat - now = 150: room for 2 needs tat - now <= 100.
    expect(denied.retryAfterMs).toBe(50);
    expectExactRetry(h, denied, 2);
  });

  it('reports resetMs until the bucket is full again and remaining as whole free cells', () => {
    const h = harness(policy);
    h.consume(3);
    h.clock.advance(130);
    expect(h.peek()).toMatchObject({ remaining: 1, resetMs: 170 });
    h.clock.advance(170);
    expect(h.peek()).toMatchObject({ remaining: 3, resetMs: 0 });
    // A full bucket is the same as no state: the step lets the store forget it then.
    const p = { limit: 10, windowMs: 1000, burst: 3 };
    expect(stepOf(gcra, undefined, ALIGNED, 3, p, 0).expiresAt).toBe(ALIGNED + 300);
  });

  it('rejects a cost above burst with Infinity', () => {
    const h = harness(policy);
    expect(expectNothingCharged(h, 4)).toMatchObject({
      retryAfterMs: Number.POSITIVE_INFINITY,
      remaining: 3,
    });
  });

  it('is exact when T is not a whole number of ms', () => {
    const h = harness({ limit: 3, window: 1000, burst: 2, algorithm: 'gcra' });
    h.consume(2);
    const denied = h.consume();
    expect(denied.retryAfterMs).toBe(334);
    expectExactRetry(h, denied);
    h.consume();
    // Three cells since the start: tat is 1000 ms after it, exactly, not 999.99.
    expect(h.peek()).toMatchObject({ resetMs: 1000 - 334 });
  });

  it('stores tat as [anchorMs, units] with 0 <= units < limit', () => {
    const p = { limit: 3, windowMs: 1000, burst: 5 };
    let state: number[] | undefined;
    for (let t = ALIGNED; t < ALIGNED + 5000; t += 97) {
      const step = stepOf(gcra, state, t, 1, p, 0);
      if (!step.allowed) continue;
      state = step.next!;
      expect(state).toHaveLength(2);
      expect(state[1]).toBeGreaterThanOrEqual(0);
      expect(state[1]).toBeLessThan(p.limit);
      expect(step.expiresAt).toBe(state[0]! + (state[1]! > 0 ? 1 : 0));
    }
  });

  it('moves tat back on refund, never past a full bucket', async () => {
    const h = harness(policy);
    const d = h.consume(2);
    h.consume();
    await d.refund!();
    expect(h.peek()).toMatchObject({ remaining: 2, resetMs: 100 });
    h.clock.advance(1000);
    const e = h.consume();
    h.clock.advance(500);
    await e.refund!();
    expect(h.peek().remaining).toBe(3);
    expect(h.consume(3).allowed).toBe(true);
  });
});

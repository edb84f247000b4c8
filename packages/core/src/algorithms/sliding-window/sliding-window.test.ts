import { ALIGNED, expectExactRetry, expectNothingCharged, harness, stepOf } from '../../../test/harness.js';
import { slidingWindow } from './sliding-window.js';

const policy = { limit: 10, window: 1000, algorithm: 'sliding-window' } as const;

describe('sliding-window', () => {
  it('weighs the previous window by the part of it still inside the sliding window', () => {
    const h = harness(policy);
    h.consume(10);
    h.clock.advance(1250);
    // estimate = 10 * 750 / 1000 + 0 = 7.5: two more fit (8.5, 9.5), a third would make 10.5.
    expect(h.consume()).toMatchObject({ allowed: true, remaining: 1, resetMs: 750 });
    expect(h.consume()).toMatchObject({ allowed: true, remaining: 0 });
    const denied = h.consume();
    expect(denied).toMatchObject({ allowed: false, remaining: 0 });
    // Allowed once 10 * (1000 - elapsed) / 1000 + 3 <= 10, i.e. elapsed >= 300: 50 ms from now.
    expect(denied.retryAfterMs).toBe(50);
    expectExactRetry(h, denied);
  });

  it('waits into the next window when the current one alone cannot fit the call', () => {
    const h = harness(policy);
    h.consume(10);
    const denied = h.consume(2);
    // Next window: 10 * (1000 - elapsed) / 1000 + 2 <= 10 once elapsed >= 200.
    // The window ends at 1000 ms; a denied decision reports its retry time (API.md r2).
    expect(denied).toMatchObject({ resetMs: 1200, retryAfterMs: 1200 });
    expectExactRetry(h, denied, 2);
  });

  it('reports remaining as floor(limit - estimate), never below 0', () => {
    const h = harness(policy);
    h.consume(9);
    h.clock.advance(1001);
    // estimate = 9 * 999 / 1000 = 8.991 -> remaining floor(1.009) = 1 before, floor(0.009) = 0 after.
    expect(h.peek().remaining).toBe(1);
    expect(h.consume().remaining).toBe(0);
    expect(h.consume()).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('resets at the end of the current window and forgets everything after two', () => {
    const h = harness(policy, ALIGNED + 300);
    expect(h.consume(4).resetMs).toBe(700);
    h.clock.advance(699);
    expect(h.peek()).toMatchObject({ remaining: 6, resetMs: 1 });
    h.clock.advance(1001);
    expect(h.peek()).toMatchObject({ remaining: 10, resetMs: 1000 });
  });

  it('charges cost > 1 and nothing for a rejected call', () => {
    const h = harness(policy);
    expect(h.consume(7).remaining).toBe(3);
    expectNothingCharged(h, 4);
    expect(h.consume(3).allowed).toBe(true);
  });

  it('denies a cost above the limit with retryAfterMs Infinity', () => {
    const h = harness(policy);
    expect(expectNothingCharged(h, 11)).toMatchObject({
      retryAfterMs: Number.POSITIVE_INFINITY,
      remaining: 10,
    });
  });

  it('refunds into the current or the previous window', async () => {
    const h = harness(policy);
    const d = h.consume(10);
    h.clock.advance(1500);
    expect(h.peek().remaining).toBe(5);
    await d.refund!();
    expect(h.peek().remaining).toBe(10);
    const late = h.consume(4);
    await late.refund!();
    expect(h.peek().remaining).toBe(10);
  });

  it('keeps [windowIndex, current, previous] as its state', () => {
    const p = { limit: 10, windowMs: 1000, burst: 10 };
    const a = stepOf(slidingWindow, undefined, ALIGNED, 3, p, 0);
    expect(a.next).toEqual([ALIGNED / 1000, 3, 0]);
    const b = stepOf(slidingWindow, a.next, ALIGNED + 1000, 1, p, 0);
    expect(b.next).toEqual([ALIGNED / 1000 + 1, 1, 3]);
    expect(b.expiresAt).toBe(ALIGNED + 3000);
  });
});

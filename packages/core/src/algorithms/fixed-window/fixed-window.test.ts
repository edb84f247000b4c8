import { ALIGNED, expectExactRetry, expectNothingCharged, harness, stepOf } from '../../../test/harness.js';
import { fixedWindow } from './fixed-window.js';

const policy = { limit: 3, window: '1s', algorithm: 'fixed-window' } as const;

describe('fixed-window', () => {
  it('allows limit units per window and counts remaining down to 0', () => {
    const h = harness(policy);
    expect([1, 2, 3].map(() => h.consume().remaining)).toEqual([2, 1, 0]);
    expect(h.consume()).toMatchObject({ allowed: false, remaining: 0, resetMs: 1000, retryAfterMs: 1000 });
  });

  it('aligns windows to multiples of the window since the epoch', () => {
    const h = harness(policy, ALIGNED + 400);
    expect(h.consume()).toMatchObject({ allowed: true, resetMs: 600 });
    h.consume(2);
    h.clock.advance(599);
    expect(h.consume()).toMatchObject({ allowed: false, resetMs: 1, retryAfterMs: 1 });
    h.clock.advance(1);
    expect(h.consume()).toMatchObject({ allowed: true, remaining: 2, resetMs: 1000 });
  });

  it('starts every window empty: a full window at its last ms, a full one at the next', () => {
    const h = harness(policy, ALIGNED + 999);
    expect(h.consume(3).allowed).toBe(true);
    expect(h.consume().allowed).toBe(false);
    h.clock.advance(1);
    expect(h.consume(3).allowed).toBe(true);
  });

  it('charges cost > 1 as that many units', () => {
    const h = harness(policy);
    expect(h.consume(2)).toMatchObject({ allowed: true, remaining: 1 });
    expect(h.consume(2)).toMatchObject({ allowed: false, remaining: 1, retryAfterMs: 1000 });
    expect(h.consume(1)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('charges nothing for a rejected call', () => {
    const h = harness(policy);
    h.consume(2);
    expectNothingCharged(h, 2);
    expect(h.consume(1).allowed).toBe(true);
  });

  it('gives an honest and tight retryAfterMs', () => {
    const h = harness(policy, ALIGNED + 123);
    h.consume(3);
    h.clock.advance(200);
    const denied = h.consume(2);
    expect(denied.retryAfterMs).toBe(677);
    expectExactRetry(h, denied, 2);
  });

  it('denies a cost above the limit with retryAfterMs Infinity and charges nothing', () => {
    const h = harness(policy);
    h.consume();
    expect(expectNothingCharged(h, 4)).toMatchObject({
      retryAfterMs: Number.POSITIVE_INFINITY,
      remaining: 2,
      resetMs: 1000,
    });
  });

  it('refunds a charge made in the current window, not one from a window gone by', async () => {
    const h = harness(policy);
    const first = h.consume(2);
    await first.refund!();
    expect(h.peek().remaining).toBe(3);
    await first.refund!();
    expect(h.peek().remaining).toBe(3);
    const old = h.consume(3);
    h.clock.advance(1000);
    h.consume(1);
    await old.refund!();
    expect(h.peek().remaining).toBe(2);
  });

  it('keeps its state as [windowIndex, count] and forgets it when the window ends', () => {
    const p = { limit: 3, windowMs: 1000, burst: 3 };
    const step = stepOf(fixedWindow, undefined, ALIGNED + 10, 2, p, 0);
    expect(step.next).toEqual([ALIGNED / 1000, 2]);
    expect(step.expiresAt).toBe(ALIGNED + 1000);
    expect(stepOf(fixedWindow, step.next, ALIGNED + 1000, 3, p, 0).allowed).toBe(true);
  });
});

import { ALIGNED, expectExactRetry, expectNothingCharged, harness, stepOf } from '../../../test/harness.js';
import { slidingLog } from './sliding-log.js';

const policy = { limit: 3, window: 1000, algorithm: 'sliding-log' } as const;
const params = { limit: 3, windowMs: 1000, burst: 3 };

describe('sliding-log', () => {
  it('counts exactly the calls in (now - window, now]', () => {
    const h = harness(policy, ALIGNED + 500);
    h.consume();
    h.clock.advance(100);
    h.consume();
    h.clock.advance(100);
    expect(h.consume()).toMatchObject({ allowed: true, remaining: 0, resetMs: 1000 });
    h.clock.advance(100);
    // The first entry leaves the window at its time + window: 700 ms from now.
    const denied = h.consume();
    expect(denied).toMatchObject({ allowed: false, remaining: 0, resetMs: 900, retryAfterMs: 700 });
    expectExactRetry(h, denied);
  });

  it('has no window edge: at most limit in any window, wherever it starts', () => {
    const h = harness(policy, ALIGNED + 999);
    h.consume(3);
    h.clock.advance(1);
    expect(h.consume().allowed).toBe(false);
    h.clock.advance(998);
    expect(h.consume().allowed).toBe(false);
    h.clock.advance(1);
    expect(h.consume(3).allowed).toBe(true);
  });

  it('waits for as many entries to leave as the cost needs', () => {
    const h = harness(policy);
    h.consume();
    h.clock.advance(200);
    h.consume();
    h.clock.advance(200);
    h.consume();
    const denied = h.consume(2);
    // Two entries must leave: the second at 200 + 1000.
    expect(denied.retryAfterMs).toBe(800);
    expectExactRetry(h, denied, 2);
  });

  it('resets when the newest entry leaves the window', () => {
    const h = harness(policy);
    h.consume();
    h.clock.advance(300);
    h.consume();
    h.clock.advance(100);
    expect(h.peek().resetMs).toBe(900);
    h.clock.advance(900);
    expect(h.peek()).toMatchObject({ remaining: 3, resetMs: 0 });
  });

  it('charges nothing for a rejected call, and Infinity for a cost above the limit', () => {
    const h = harness(policy);
    h.consume(2);
    expectNothingCharged(h, 2);
    expect(expectNothingCharged(h, 4).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });

  it('stores each entry once with its cost, calls in one ms sharing an entry, never more than limit entries', () => {
    let state = stepOf(slidingLog, undefined, 0, 1, params, 0).next;
    state = stepOf(slidingLog, state, 0, 2, params, 0).next;
    expect(state).toEqual([0, 3]);
    state = undefined;
    for (let t = 0; t < 10_000; t += 7) {
      const step = stepOf(slidingLog, state, t, 1, params, 0);
      if (step.allowed) state = step.next;
      expect(state!.length).toBeLessThanOrEqual(2 * params.limit);
    }
  });

  it('refunds the entry of the call that charged it', async () => {
    const h = harness(policy);
    const first = h.consume(2);
    h.clock.advance(10);
    h.consume();
    await first.refund!();
    expect(h.peek()).toMatchObject({ remaining: 2, resetMs: 1000 });
  });
});

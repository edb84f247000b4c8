import { createLimiter, MemoryStore } from '@sluice/core';
import { manualClock } from '@sluice/core/testing';
import { expectExactRetry, expectNothingCharged, harness } from '../../../test/harness.js';

const policy = { limit: 2, window: '10s', algorithm: 'concurrency' } as const;

describe('concurrency', () => {
  it('holds at most limit leases; a lease never released expires after the window', () => {
    const h = harness(policy);
    expect(h.consume()).toMatchObject({ allowed: true, remaining: 1, resetMs: 0 });
    h.clock.advance(3000);
    expect(h.consume()).toMatchObject({ allowed: true, remaining: 0 });
    h.clock.advance(1000);
    const denied = h.consume();
    // The first lease expires 10 s after it was taken.
    expect(denied).toMatchObject({ allowed: false, remaining: 0, resetMs: 0, retryAfterMs: 6000 });
    expect(denied.release).toBeUndefined();
    expect(denied.refund).toBeUndefined();
    expectExactRetry(h, denied);
    expect(h.consume().allowed).toBe(true);
  });

  it('frees a lease on release; a second release does nothing', async () => {
    const h = harness(policy);
    const a = h.consume();
    const b = h.consume();
    expect(h.consume().allowed).toBe(false);
    await a.release!();
    expect(h.peek().remaining).toBe(1);
    await a.release!();
    expect(h.peek().remaining).toBe(1);
    expect(h.consume().allowed).toBe(true);
    await b.release!();
    expect(h.peek().remaining).toBe(1);
  });

  it('makes release after expiry harmless to newer leases', async () => {
    const h = harness(policy);
    const old = h.consume();
    h.clock.advance(10_000);
    h.consume(2);
    await old.release!();
    expect(h.peek().remaining).toBe(0);
  });

  it('takes cost leases at once, waits for enough of them to expire, and rejects above the limit', () => {
    const h = harness({ limit: 3, window: 1000, algorithm: 'concurrency' });
    h.consume();
    h.clock.advance(100);
    h.consume();
    h.clock.advance(100);
    const denied = expectNothingCharged(h, 3);
    // Room for 3 only when both leases are gone: the second expires at 1100.
    expect(denied.retryAfterMs).toBe(900);
    expectExactRetry(h, denied, 3);
    expect(expectNothingCharged(h, 4).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });

  it('releases only the lease on release, and every policy on refund', async () => {
    const clock = manualClock();
    const limiter = createLimiter({
      policies: [
        { name: 'inflight', limit: 1, window: '1m', algorithm: 'concurrency' },
        { name: 'rate', limit: 5, window: '1m', algorithm: 'fixed-window' },
      ],
      store: new MemoryStore({ clock }),
    });
    const remaining = async () => (await limiter.peek('s')).policies.map((p) => p.remaining);
    const d = await limiter.consume('s');
    expect(await remaining()).toEqual([0, 4]);
    await d.release!();
    expect(await remaining()).toEqual([1, 4]);
    const e = await limiter.consume('s');
    await e.refund!();
    expect(await remaining()).toEqual([1, 4]);
    await e.release!();
    expect(await remaining()).toEqual([1, 4]);
  });
});

import {
  createLimiter,
  ErrorCodes,
  MemoryStore,
  type Store,
  type StoreCall,
  type StoreOutcome,
} from '@sluice/core';
import { manualClock } from '@sluice/core/testing';

function setup() {
  const clock = manualClock();
  const store = new MemoryStore({ clock });
  const limiter = createLimiter({
    policies: [
      { name: 'second', limit: 3, window: '1s', algorithm: 'fixed-window' },
      { name: 'minute', limit: 10, window: '1m', algorithm: 'sliding-log' },
    ],
    store,
  });
  return { clock, store, limiter };
}

describe('consume', () => {
  it('resolves to the decision shape of the contract', async () => {
    const { limiter } = setup();
    const d = await limiter.consume('user-42');
    expect(d).toEqual({
      allowed: true,
      limit: 3,
      remaining: 2,
      resetMs: expect.any(Number),
      retryAfterMs: 0,
      policy: 'second',
      policies: [
        {
          name: 'second',
          algorithm: 'fixed-window',
          limit: 3,
          windowMs: 1000,
          remaining: 2,
          resetMs: expect.any(Number),
          allowed: true,
        },
        {
          name: 'minute',
          algorithm: 'sliding-log',
          limit: 10,
          windowMs: 60_000,
          remaining: 9,
          resetMs: 60_000,
          allowed: true,
        },
      ],
      refund: expect.any(Function),
    });
    expect(d.release).toBeUndefined();
    expect(d.delayMs).toBeUndefined();
    expect(d.degraded).toBeUndefined();
  });

  it('denies with reason "limit" and no refund', async () => {
    const { limiter } = setup();
    await limiter.consume('s', { cost: 3 });
    const d = await limiter.consume('s');
    expect(d).toMatchObject({ allowed: false, reason: 'limit', policy: 'second', remaining: 0 });
    expect(d.retryAfterMs).toBeGreaterThan(0);
    expect(d.refund).toBeUndefined();
  });

  it('reports delayMs for a leaky bucket that delays', async () => {
    const clock = manualClock();
    const store = new MemoryStore({ clock });
    const limiter = createLimiter({ limit: 2, window: '1s', algorithm: 'leaky-bucket', store });
    expect((await limiter.consume('s')).delayMs).toBe(0);
    expect((await limiter.consume('s')).delayMs).toBe(500);
  });

  it('rejects (never throws) on a subject that is not a string', async () => {
    const { limiter } = setup();
    for (const subject of [undefined, null, 42, {}, ['a']]) {
      let pending: Promise<unknown> | undefined;
      expect(() => {
        pending = limiter.consume(subject as never);
      }).not.toThrow();
      await expect(pending).rejects.toThrow(TypeError);
      await expect(limiter.peek(subject as never)).rejects.toThrow(TypeError);
      await expect(limiter.reset(subject as never)).rejects.toThrow(TypeError);
    }
  });

  it('rejects a cost that is not a positive integer, and charges nothing', async () => {
    const { limiter } = setup();
    for (const cost of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '2', null]) {
      await expect(limiter.consume('s', { cost: cost as never })).rejects.toThrow(RangeError);
      await expect(limiter.peek('s', { cost: cost as never })).rejects.toThrow(RangeError);
    }
    expect((await limiter.peek('s')).remaining).toBe(3);
  });

  // a33bb68 charged rate-limiter-flexible's consume(key, 2) as 1, silently (newcomer review).
  it('rejects options that are not an object (consume(key, points)), and charges nothing', async () => {
    const { limiter } = setup();
    for (const options of [2, '2', true, null]) {
      await expect(limiter.consume('s', options as never)).rejects.toThrow(
        /consume\(key, \{ cost: points \}\)/,
      );
    }
    expect((await limiter.peek('s')).remaining).toBe(3);
  });
});

describe('peek', () => {
  it('answers the same question without charging', async () => {
    const { limiter } = setup();
    await limiter.consume('s', { cost: 2 });
    const a = await limiter.peek('s');
    const b = await limiter.peek('s');
    expect(a).toEqual(b);
    expect(a).toMatchObject({ allowed: true, remaining: 1 });
    expect(a.refund).toBeUndefined();
    expect(await limiter.peek('s', { cost: 2 })).toMatchObject({ allowed: false, policy: 'second' });
    expect((await limiter.consume('s')).allowed).toBe(true);
  });
});

describe('reset', () => {
  it('forgets the subject under every policy, and only that subject', async () => {
    const { limiter } = setup();
    await limiter.consume('a', { cost: 3 });
    await limiter.consume('b', { cost: 2 });
    await expect(limiter.reset('a')).resolves.toBeUndefined();
    expect((await limiter.peek('a')).policies.map((p) => p.remaining)).toEqual([3, 10]);
    expect((await limiter.peek('b')).policies.map((p) => p.remaining)).toEqual([1, 8]);
  });
});

describe('refund', () => {
  it('gives back what the call charged, once', async () => {
    const { limiter } = setup();
    const d = await limiter.consume('s', { cost: 2 });
    await limiter.consume('s');
    await d.refund!();
    await d.refund!();
    expect((await limiter.peek('s')).policies.map((p) => p.remaining)).toEqual([2, 9]);
  });
});

describe('decide', () => {
  it('returns a plain value, not a promise, on the memory store', () => {
    const { limiter } = setup();
    const d = limiter.decide('s', 1, 'consume');
    expect(d).not.toBeInstanceOf(Promise);
    expect(typeof (d as { then?: unknown }).then).toBe('undefined');
    expect(d).toMatchObject({ allowed: true, remaining: 2 });
    expect(limiter.decide('s', 1, 'peek')).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('returns a promise when the store answers asynchronously', async () => {
    const memory = new MemoryStore();
    const remote: Store = {
      local: false,
      consume: async (call: StoreCall): Promise<StoreOutcome> => memory.consume(call),
      refund: async (call) => memory.refund(call),
      reset: async (limiter, subject) => memory.reset(limiter, subject),
    };
    const limiter = createLimiter({ limit: 1, window: '1s', store: remote });
    const d = limiter.decide('s', 1, 'consume');
    expect(d).toBeInstanceOf(Promise);
    expect(await d).toMatchObject({ allowed: true, remaining: 0 });
    expect(await limiter.consume('s')).toMatchObject({ allowed: false });
  });

  it('goes through the consume of a MemoryStore subclass', async () => {
    class CountingStore extends MemoryStore {
      calls = 0;
      override consume(call: StoreCall): StoreOutcome {
        this.calls++;
        return super.consume(call);
      }
    }
    const store = new CountingStore();
    const limiter = createLimiter({ limit: 2, window: '1s', store });
    limiter.decide('s', 1, 'consume');
    await limiter.consume('s');
    expect(store.calls).toBe(2);
  });
});

describe('limiter names', () => {
  it('warns once when one store gets two limiters of one name with different policies', () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const store = new MemoryStore();
      createLimiter({ name: 'login', limit: 5, window: '1m', store });
      createLimiter({ name: 'login', limit: 5, window: '1m', store });
      createLimiter({ name: 'other', limit: 9, window: '1m', store });
      createLimiter({ limit: 9, window: '1m' });
      createLimiter({ limit: 10, window: '1m' });
      expect(warn).not.toHaveBeenCalled();
      createLimiter({ name: 'login', limit: 6, window: '1m', store });
      createLimiter({ name: 'login', limit: 7, window: '1m', store });
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]![1]).toMatchObject({ code: ErrorCodes.NAME_REUSE });
      expect(String(warn.mock.calls[0]![0])).toContain('"login"');
    } finally {
      warn.mockRestore();
    }
  });

  it('exposes the parsed policies', () => {
    const limiter = createLimiter({ name: 'api', limit: 4, window: '2s', algorithm: 'leaky-bucket' });
    expect(limiter.name).toBe('api');
    expect(limiter.policies).toEqual([
      { name: '4-per-2s', algorithm: 'leaky-bucket', limit: 4, windowMs: 2000, delay: true },
    ]);
  });
});

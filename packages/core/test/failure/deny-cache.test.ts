import { type AlgorithmName, createLimiter, type Decision, MemoryStore, type Policy } from '@sluice/core';
import { manualClock } from '@sluice/core/testing';
import fc from '../../../../test/support/fast-check.js';
import { allowWarnings } from '../../../../test/support/warnings.js';
import { DenyCache } from '../../src/stores/deny-cache.js';
import { ControlledStore } from './controlled-store.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');

function setup(options: ({ policies: Policy[] } | Policy) & { denyCacheMs?: number }) {
  const store = new ControlledStore();
  const limiter = createLimiter({ ...options, store });
  return { store, limiter, clock: store.clock };
}

describe('deny cache', () => {
  test('a denied subject is denied in process until its retry time, with times counting down', async () => {
    const { store, limiter, clock } = setup({
      limit: 2,
      window: '10s',
      algorithm: 'fixed-window',
      denyCacheMs: 60_000,
    });
    clock.set(1_700_000_000_000); // 0 ms into a 10 s window
    await limiter.consume('a');
    await limiter.consume('a');
    const denied = await limiter.consume('a');
    expect(denied).toMatchObject({ allowed: false, retryAfterMs: 10_000, resetMs: 10_000 });
    expect(store.calls.consume).toBe(3);
    expect(await limiter.consume('a')).toEqual(denied);
    clock.advance(2500);
    const later = await limiter.consume('a');
    expect(later).toMatchObject({ allowed: false, reason: 'limit', retryAfterMs: 7500, resetMs: 7500 });
    expect(later.policies[0]).toMatchObject({ resetMs: 7500, remaining: 0, allowed: false });
    expect(store.calls.consume).toBe(3);
    clock.advance(7499);
    expect((await limiter.consume('a')).retryAfterMs).toBe(1);
    expect(store.calls.consume).toBe(3);
    clock.advance(1);
    expect(await limiter.consume('a')).toMatchObject({ allowed: true });
    expect(store.calls.consume).toBe(4);
  });

  test('only calls of the denied cost are cached; other subjects are not affected', async () => {
    const { store, limiter } = setup({ limit: 3, window: '1m', algorithm: 'sliding-log' });
    await limiter.consume('a', { cost: 2 });
    expect((await limiter.consume('a', { cost: 2 })).allowed).toBe(false);
    expect(store.calls.consume).toBe(2);
    expect((await limiter.peek('a', { cost: 2 })).allowed).toBe(false);
    expect(store.calls.consume).toBe(2);
    // A larger cost may be refused for longer (or for ever): the store answers it, and replaces the entry.
    expect((await limiter.consume('a', { cost: 3 })).allowed).toBe(false);
    expect(store.calls.consume).toBe(3);
    expect((await limiter.consume('a', { cost: 1 })).allowed).toBe(true);
    expect((await limiter.consume('b', { cost: 2 })).allowed).toBe(true);
    expect(store.calls.consume).toBe(5);
  });

  test('a denial learned from peek is cached too', async () => {
    const { store, limiter } = setup({ limit: 1, window: '1m' });
    await limiter.consume('a');
    expect((await limiter.peek('a')).allowed).toBe(false);
    expect((await limiter.consume('a')).allowed).toBe(false);
    expect(store.calls.consume).toBe(2);
  });

  test("this limiter's refund and reset forget the subject's denial", async () => {
    const { store, limiter } = setup({ limit: 1, window: '1m', algorithm: 'token-bucket' });
    const first = await limiter.consume('a');
    expect((await limiter.consume('a')).allowed).toBe(false);
    await first.refund!();
    expect((await limiter.consume('a')).allowed).toBe(true);
    expect((await limiter.consume('a')).allowed).toBe(false);
    await limiter.reset('a');
    expect((await limiter.consume('a')).allowed).toBe(true);
    expect(store.calls.consume).toBe(5);
  });

  test("a refund under a global-scoped policy forgets every subject's denial", async () => {
    const { limiter } = setup({ limit: 1, window: '1m', scope: 'global' });
    const first = await limiter.consume('a');
    expect((await limiter.consume('b')).allowed).toBe(false);
    await first.refund!();
    expect((await limiter.consume('b')).allowed).toBe(true);
  });

  test('is off for limiters with a concurrency policy', async () => {
    const { store, limiter } = setup({ limit: 1, window: '1m', algorithm: 'concurrency' });
    await limiter.consume('a');
    expect((await limiter.consume('a')).allowed).toBe(false);
    expect((await limiter.consume('a')).allowed).toBe(false);
    expect(store.calls.consume).toBe(3);
  });

  test('a cost that can never fit (retryAfterMs Infinity) is not cached', async () => {
    const { store, limiter } = setup({ limit: 2, window: '1m' });
    expect((await limiter.consume('a', { cost: 3 })).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
    await limiter.consume('a', { cost: 3 });
    expect(store.calls.consume).toBe(2);
  });

  test('holds a denial no longer than the first policy reset, so cached numbers never go stale', async () => {
    const { store, limiter, clock } = setup({
      policies: [
        { limit: 1, window: '1h', name: 'hourly', algorithm: 'fixed-window' },
        { limit: 10, window: '1s', name: 'second', algorithm: 'fixed-window' },
      ],
    });
    clock.set(Math.ceil(1_700_000_000_000 / 3_600_000) * 3_600_000); // the start of an hour (and a second)
    await limiter.consume('a');
    const denied = await limiter.consume('a');
    expect(denied).toMatchObject({ allowed: false, policy: 'hourly', retryAfterMs: 3_600_000 });
    expect(denied.policies[1]).toMatchObject({ remaining: 9, resetMs: 1000 });
    clock.advance(999);
    expect((await limiter.consume('a')).policies[1]).toMatchObject({ remaining: 9, resetMs: 1 });
    expect(store.calls.consume).toBe(2);
    clock.advance(1);
    const fresh = await limiter.consume('a');
    expect(store.calls.consume).toBe(3);
    expect(fresh.policies[1]).toMatchObject({ remaining: 10, resetMs: 1000 });
    expect(fresh.retryAfterMs).toBe(3_600_000 - 1000);
  });

  test('is bounded: the subject the store denied longest ago is forgotten first', () => {
    const policy = { name: 'p', algorithm: 'fixed-window', limit: 1, windowMs: 1000, delay: false } as const;
    const cache = new DenyCache([policy], 5000, 3);
    const decision = {
      allowed: false,
      retryAfterMs: 1000,
      resetMs: 1000,
      policies: [],
    } as unknown as Decision;
    const steps = [{ allowed: false, remaining: 0, resetMs: 1000, retryAfterMs: 1000, delayMs: 0 }];
    const deny = (subject: string) => cache.answered(subject, 1, decision, steps, cache.moment, 0, 0);
    for (const subject of ['a', 'b', 'c']) deny(subject);
    deny('a');
    deny('d');
    expect(cache.size).toBe(3);
    expect(cache.lookup('b', 1, 1)).toBeUndefined();
    expect(['a', 'c', 'd'].map((s) => cache.lookup(s, 1, 1)?.retryAfterMs)).toEqual([999, 999, 999]);
    expect(cache.lookup('a', 1, 1000)).toBeUndefined();
    expect(cache.size).toBe(2);
  });
});

/** A decision as data (no functions); `remaining` overridden when given. */
function seen({ refund, release, ...data }: Decision, remaining?: number): object {
  if (remaining === undefined) return data;
  return { ...data, remaining, policies: data.policies.map((p) => ({ ...p, remaining })) };
}

/** Every algorithm whose denials the cache keeps. */
const cached: AlgorithmName[] = [
  'fixed-window',
  'sliding-window',
  'sliding-log',
  'token-bucket',
  'leaky-bucket',
  'gcra',
];

const limiterCases: Array<[string, Policy[]]> = [
  ...cached.map((algorithm): [string, Policy[]] => [algorithm, [{ limit: 4, window: 1000, algorithm }]]),
  ['global fixed-window', [{ limit: 5, window: 1000, algorithm: 'fixed-window', scope: 'global' }]],
  [
    'two policies, one global',
    [
      { limit: 3, window: 500, algorithm: 'token-bucket', burst: 5 },
      { limit: 6, window: 4000, algorithm: 'sliding-window', scope: 'global' },
    ],
  ],
];

const step = fc.record({
  subject: fc.constantFrom('a', 'b', 'c'),
  cost: fc.integer({ min: 1, max: 3 }),
  advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 51, max: 2000 })),
  mode: fc.constantFrom('consume', 'consume', 'consume', 'peek', 'refund'),
});

describe.each(limiterCases)('deny cache exactness: %s', (_name, policies) => {
  test('allows and denies exactly as the store does, over random traces with refunds', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 80 }), async (trace) => {
        const clock = manualClock();
        const store = new ControlledStore(clock);
        const withCache = createLimiter({ policies, store });
        const plain = createLimiter({ policies, store: new MemoryStore({ clock }) });
        const refunds = new Map<string, [Decision, Decision]>();
        for (const { subject, cost, advanceMs, mode } of trace) {
          clock.advance(advanceMs);
          const last = refunds.get(subject);
          if (mode === 'refund') {
            if (last === undefined) continue;
            await last[0].refund!();
            await last[1].refund!();
            refunds.delete(subject);
            continue;
          }
          const a = await withCache[mode](subject, { cost });
          const b = await plain[mode](subject, { cost });
          expect(a.allowed).toBe(b.allowed);
          if (a.allowed && mode === 'consume') refunds.set(subject, [a, b]);
        }
      }),
      { numRuns: 150 },
    );
  });

  test('gives the store decision itself to one subject calling at one cost', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 120 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 2 }),
        async (gaps, cost) => {
          const clock = manualClock();
          const store = new ControlledStore(clock);
          const withCache = createLimiter({ policies: policies.slice(0, 1), store });
          const plain = createLimiter({ policies: policies.slice(0, 1), store: new MemoryStore({ clock }) });
          for (const gap of gaps) {
            clock.advance(gap);
            const a = await withCache.consume('a', { cost });
            const b = await plain.consume('a', { cost });
            if (cost === 1 || a.allowed) expect(seen(a)).toEqual(seen(b));
            // Denied at cost 2, a policy's remaining may rise to 1 with time: the cache reports the 0 it saw.
            else expect(seen(a, 0)).toEqual(seen(b, 0));
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

import { createLimiter, type LimiterOptions } from '@sluice/core';
import { expectOnlyWarnings } from '../../../../test/support/warnings.js';
import { ControlledStore, type Health } from './controlled-store.js';
import { watchUnhandledRejections } from './promises.js';

// A failing store is warned about once when it fails and once when it is back: captured, nothing else.
const warnings = expectOnlyWarnings('ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_RECOVERED');

const unhandled = watchUnhandledRejections();
afterEach(() => {
  expect(unhandled).toEqual([]);
});

function failing(health: Health, options: Omit<LimiterOptions, 'store'>) {
  const store = new ControlledStore();
  store.health = health;
  return { store, limiter: createLimiter({ ...options, store }) };
}

describe.each<Health>(['reject', 'throw'])('a store that fails (%s)', (health) => {
  describe("onStoreError 'local' (the default)", () => {
    test('decides with in-process counters of the same policies, degraded', async () => {
      const { limiter } = failing(health, { limit: 2, window: '1m' });
      const decisions = [
        await limiter.consume('a'),
        await limiter.consume('a'),
        await limiter.consume('a'),
        await limiter.consume('b'),
      ];
      expect(decisions.map((d) => [d.allowed, d.degraded])).toEqual([
        [true, true],
        [true, true],
        [false, true],
        [true, true],
      ]);
      // Said once, not per call.
      expect(warnings.codes).toEqual(['ERR_SLUICE_STORE_DEGRADED']);
      expect(decisions[1]).toMatchObject({ remaining: 0, policy: '2-per-1m' });
      expect(decisions[2]).toMatchObject({ reason: 'limit', remaining: 0 });
      expect(decisions[2]!.retryAfterMs).toBeGreaterThan(0);
      expect(decisions[2]!.retryAfterMs).toBeLessThanOrEqual(120_000);
    });

    test('limiters with the same name on one store share the fallback counters; other names do not', async () => {
      const { store, limiter } = failing(health, { limit: 1, window: '1m', name: 'api' });
      const twin = createLimiter({ limit: 1, window: '1m', name: 'api', store });
      const other = createLimiter({ limit: 1, window: '1m', name: 'other', store });
      expect((await limiter.consume('a')).allowed).toBe(true);
      expect(await twin.consume('a')).toMatchObject({ allowed: false, degraded: true });
      expect(await other.consume('a')).toMatchObject({ allowed: true, degraded: true });
    });

    test('refund and release give back to the fallback, not to the failing store', async () => {
      const { store, limiter } = failing(health, {
        policies: [
          { limit: 1, window: '1m', algorithm: 'concurrency' },
          { limit: 10, window: '1m', algorithm: 'fixed-window' },
        ],
      });
      const first = await limiter.consume('a');
      expect((await limiter.consume('a')).allowed).toBe(false);
      await first.release!();
      const second = await limiter.consume('a');
      expect(second).toMatchObject({ allowed: true, degraded: true });
      expect(second.policies[1]!.remaining).toBe(8);
      await second.refund!();
      expect((await limiter.peek('a')).policies[1]!.remaining).toBe(9);
      expect(store.calls.refund).toBe(0);
    });

    test('reset forgets the subject in the fallback too, and resolves', async () => {
      const { limiter } = failing(health, { limit: 1, window: '1m' });
      await limiter.consume('a');
      expect((await limiter.consume('a')).allowed).toBe(false);
      await expect(limiter.reset('a')).resolves.toBeUndefined();
      expect((await limiter.consume('a')).allowed).toBe(true);
    });
  });

  describe("onStoreError 'allow'", () => {
    test('lets every call through, degraded, with nothing counted', async () => {
      const { limiter } = failing(health, {
        policies: [
          { limit: 2, window: '1m', name: 'minute' },
          { limit: 5, window: '1s', algorithm: 'token-bucket', burst: 8, name: 'burst' },
        ],
        onStoreError: 'allow',
      });
      for (let i = 0; i < 4; i++) {
        const d = await limiter.consume('a', { cost: 2 });
        expect(d).toMatchObject({
          allowed: true,
          degraded: true,
          limit: 2,
          remaining: 2,
          resetMs: 0,
          retryAfterMs: 0,
          policy: 'minute',
        });
        expect(d.reason).toBeUndefined();
        expect(d.policies.map((p) => [p.name, p.remaining, p.allowed])).toEqual([
          ['minute', 2, true],
          ['burst', 8, true],
        ]);
        await expect(d.refund!()).resolves.toBeUndefined();
      }
      expect((await limiter.peek('a')).refund).toBeUndefined();
    });

    test('concurrency decisions carry a release that resolves', async () => {
      const { store, limiter } = failing(health, {
        limit: 1,
        window: '1m',
        algorithm: 'concurrency',
        onStoreError: 'allow',
      });
      const d = await limiter.consume('a');
      expect(d).toMatchObject({ allowed: true, degraded: true });
      await expect(d.release!()).resolves.toBeUndefined();
      expect(store.calls.refund).toBe(0);
    });

    test('leaky-bucket with delay holds nothing', async () => {
      const { limiter } = failing(health, {
        limit: 1,
        window: '1s',
        algorithm: 'leaky-bucket',
        burst: 5,
        onStoreError: 'allow',
      });
      await limiter.consume('a');
      expect(await limiter.consume('a')).toMatchObject({ allowed: true, delayMs: 0 });
    });
  });

  describe("onStoreError 'deny'", () => {
    test("refuses with reason 'store-error', and consume still resolves", async () => {
      const { limiter } = failing(health, {
        policies: [
          { limit: 2, window: '1m', name: 'minute' },
          { limit: 100, window: '1h', name: 'hour' },
        ],
        onStoreError: 'deny',
      });
      for (const decision of [await limiter.consume('a'), await limiter.peek('a')]) {
        expect(decision).toMatchObject({
          allowed: false,
          degraded: true,
          reason: 'store-error',
          limit: 2,
          remaining: 0,
          resetMs: 1000,
          retryAfterMs: 1000,
          policy: 'minute',
        });
        expect(decision.policies.every((p) => !p.allowed && p.remaining === 0)).toBe(true);
        expect(decision.refund).toBeUndefined();
      }
    });
  });
});

describe('a store that answers', () => {
  test('decides: no degraded flag, reason limit', async () => {
    const store = new ControlledStore();
    const limiter = createLimiter({ limit: 1, window: '1m', store, onStoreError: 'deny' });
    const decisions = [await limiter.consume('a'), await limiter.consume('a')];
    expect(decisions.map((d) => [d.allowed, d.degraded, d.reason])).toEqual([
      [true, undefined, undefined],
      [false, undefined, 'limit'],
    ]);
    expect(store.calls.consume).toBe(2);
  });

  test('a store outcome the limiter cannot read counts as a failure', async () => {
    const store = new ControlledStore();
    store.consume = () => Promise.resolve({ now: 0, steps: [] });
    const limiter = createLimiter({ limit: 1, window: '1m', store, onStoreError: 'deny' });
    expect(await limiter.consume('a')).toMatchObject({ allowed: false, reason: 'store-error' });
  });
});

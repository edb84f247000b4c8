import { createLimiter } from '@sluice/core';
import { expectOnlyWarnings } from '../../../../test/support/warnings.js';
import { FAILURES_TO_OPEN, PROBE_AFTER_MS } from '../../src/stores/breaker.js';
import { ControlledStore } from './controlled-store.js';
import { track, watchUnhandledRejections } from './promises.js';

// A failing store is warned about once when it fails and once when it is back: captured, nothing else.
expectOnlyWarnings('ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_RECOVERED');

const unhandled = watchUnhandledRejections();
afterEach(() => {
  jest.useRealTimers();
  expect(unhandled).toEqual([]);
});

function setup() {
  const store = new ControlledStore();
  const limiter = createLimiter({ limit: 3, window: '1m', store, onStoreError: 'deny' });
  return { store, limiter };
}

/** Fails FAILURES_TO_OPEN calls in a row: the circuit opens. */
async function open(store: ControlledStore, limiter: ReturnType<typeof setup>['limiter']) {
  const before = store.calls.consume;
  store.health = 'reject';
  for (let i = 0; i < FAILURES_TO_OPEN; i++) await limiter.consume('a');
  expect(store.calls.consume - before).toBe(FAILURES_TO_OPEN);
}

describe('circuit breaker', () => {
  test('repeated failures open it: calls no longer reach the store and are decided at once', async () => {
    const { store, limiter } = setup();
    await open(store, limiter);
    for (let i = 0; i < 20; i++) {
      const decision = limiter.decide(`s${i}`, 1, 'consume');
      expect(decision).not.toBeInstanceOf(Promise);
      expect(decision).toMatchObject({ allowed: false, degraded: true, reason: 'store-error' });
    }
    expect(store.calls.consume).toBe(FAILURES_TO_OPEN);
  });

  test('a hanging store costs the timeout only until the circuit opens', async () => {
    jest.useFakeTimers();
    const { store, limiter } = setup();
    store.health = 'hang';
    const first = Array.from({ length: FAILURES_TO_OPEN }, () => track(limiter.consume('a')));
    await jest.advanceTimersByTimeAsync(250 + 1); // the timeout, and the turn after it (see timeout.test.ts)
    expect(first.every((c) => c.value?.degraded === true)).toBe(true);
    const later = track(limiter.consume('a'));
    await jest.advanceTimersByTimeAsync(0);
    expect(later.value).toMatchObject({ degraded: true, reason: 'store-error' });
    expect(store.calls.consume).toBe(FAILURES_TO_OPEN);
    store.answerHung('reject');
  });

  // A batch's one failed statement counted once per call: a dropped connection under 16 calls opened
  // the circuit, and a healthy database was refused for a second (hostile review of #30; failed on
  // 9093832).
  test('the calls of one failed batch (one error) count as one failure: the circuit stays closed', async () => {
    const { store, limiter } = setup();
    store.health = 'hang';
    const batch = Array.from({ length: 4 * FAILURES_TO_OPEN }, (_, i) => track(limiter.consume(`b${i}`)));
    await new Promise((resolve) => setImmediate(resolve));
    store.failHung(new Error('Connection terminated unexpectedly'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batch.every((c) => c.value?.degraded === true)).toBe(true);
    store.health = 'up';
    expect((await limiter.consume('next')).degraded).toBeUndefined();
    // Failures of their own each count, as before.
    store.health = 'reject';
    for (let i = 0; i < FAILURES_TO_OPEN; i++) await limiter.consume('a');
    expect(limiter.decide('c', 1, 'consume')).toMatchObject({ degraded: true, reason: 'store-error' });
  });

  test('a success before the threshold resets the count', async () => {
    const { store, limiter } = setup();
    for (let round = 0; round < 3; round++) {
      store.health = 'reject';
      for (let i = 0; i < FAILURES_TO_OPEN - 1; i++) await limiter.consume('a');
      store.health = 'up';
      expect((await limiter.consume(`ok${round}`)).degraded).toBeUndefined();
    }
    expect(store.calls.consume).toBe(3 * FAILURES_TO_OPEN);
  });

  test('after PROBE_AFTER_MS one probe at a time goes to the store; its failure keeps the circuit open', async () => {
    jest.useFakeTimers();
    const { store, limiter } = setup();
    await open(store, limiter);
    store.health = 'hang';
    store.clock.advance(PROBE_AFTER_MS - 1);
    await limiter.consume('a');
    expect(store.calls.consume).toBe(FAILURES_TO_OPEN);
    store.clock.advance(1);
    const probe = track(limiter.consume('a'));
    const others = [track(limiter.consume('b')), track(limiter.consume('c'))];
    await jest.advanceTimersByTimeAsync(0);
    expect(store.calls.consume).toBe(FAILURES_TO_OPEN + 1);
    expect(probe.settled).toBe(false);
    expect(others.every((c) => c.value?.reason === 'store-error')).toBe(true);
    await jest.advanceTimersByTimeAsync(250 + 1); // the timeout, and the turn after it (see timeout.test.ts)
    expect(probe.value).toMatchObject({ degraded: true, reason: 'store-error' });
    // The failed probe keeps the circuit open for another PROBE_AFTER_MS, counted from its failure.
    store.clock.advance(PROBE_AFTER_MS - 1);
    await limiter.consume('a');
    expect(store.calls.consume).toBe(FAILURES_TO_OPEN + 1);
    store.clock.advance(1);
    const next = track(limiter.consume('a'));
    await jest.advanceTimersByTimeAsync(0);
    expect(store.calls.consume).toBe(FAILURES_TO_OPEN + 2);
    await jest.advanceTimersByTimeAsync(250 + 1); // the timeout, and the turn after it (see timeout.test.ts)
    expect(next.value?.degraded).toBe(true);
    store.answerHung('resolve');
  });

  test('a successful probe closes it: decisions come from the store again', async () => {
    const { store, limiter } = setup();
    await open(store, limiter);
    store.health = 'up';
    expect((await limiter.consume('a')).degraded).toBe(true);
    store.clock.advance(PROBE_AFTER_MS);
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume('z'));
    expect(decisions.map((d) => [d.allowed, d.degraded, d.reason])).toEqual([
      [true, undefined, undefined],
      [true, undefined, undefined],
      [true, undefined, undefined],
      [false, undefined, 'limit'],
    ]);
    expect(store.calls.consume).toBe(FAILURES_TO_OPEN + 4);
  });

  test('is shared by every limiter on the store', async () => {
    const { store, limiter } = setup();
    const other = createLimiter({ limit: 9, window: '1s', name: 'other', store, onStoreError: 'allow' });
    await open(store, limiter);
    expect(await other.consume('a')).toMatchObject({ allowed: true, degraded: true });
    expect(store.calls.consume).toBe(FAILURES_TO_OPEN);
  });

  test('refund and reset skip the store while it is open', async () => {
    const { store, limiter } = setup();
    store.health = 'up';
    const decision = await limiter.consume('a');
    await open(store, limiter);
    store.health = 'hang';
    await expect(decision.refund!()).resolves.toBeUndefined();
    await expect(limiter.reset('a')).resolves.toBeUndefined();
    expect(store.calls).toMatchObject({ refund: 0, reset: 0 });
  });
});

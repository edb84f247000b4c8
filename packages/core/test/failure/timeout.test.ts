import { createLimiter, type Decision } from '@sluice/core';
import { expectOnlyWarnings } from '../../../../test/support/warnings.js';
import { Deadlines } from '../../src/stores/deadlines.js';
import { ControlledStore } from './controlled-store.js';
import { track, watchUnhandledRejections } from './promises.js';

// A failing store is warned about once when it fails and once when it is back: captured, nothing else.
expectOnlyWarnings('ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_RECOVERED');

const unhandled = watchUnhandledRejections();

beforeEach(() => {
  jest.useFakeTimers();
});
afterEach(() => {
  jest.useRealTimers();
  expect(unhandled).toEqual([]);
});

/**
 * A call's time starts once its turn is over, and an overdue call fails one turn after its timer (after
 * pending I/O): two immediates, which these fake timers run within 1 ms, so a call made at t settles
 * at t + storeTimeout + LATER.
 */
const LATER = 1;

function setup<S extends ControlledStore>(
  storeTimeout: number | string = 250,
  store: S = new ControlledStore() as S,
) {
  const limiter = createLimiter({ limit: 5, window: '1m', store, storeTimeout, onStoreError: 'allow' });
  return { store, limiter };
}

describe('storeTimeout', () => {
  test('a hanging store call settles at storeTimeout, degraded', async () => {
    const { store, limiter } = setup();
    store.health = 'hang';
    const call = track(limiter.consume('a'));
    await jest.advanceTimersByTimeAsync(249 + LATER);
    expect(call.settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(call.settled).toBe(true);
    expect(call.value).toMatchObject({ allowed: true, degraded: true });
  });

  test('takes a duration string', async () => {
    const { store, limiter } = setup('1s');
    store.health = 'hang';
    const call = track(limiter.consume('a'));
    await jest.advanceTimersByTimeAsync(999 + LATER);
    expect(call.settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(call.value?.degraded).toBe(true);
  });

  test('calls started at different times each get their full timeout, on one timer', async () => {
    const { store, limiter } = setup();
    store.health = 'hang';
    const first = track(limiter.consume('a'));
    await jest.advanceTimersByTimeAsync(100);
    const second = track(limiter.consume('b'));
    await jest.advanceTimersByTimeAsync(100);
    const third = track(limiter.consume('c'));
    // Its turn over, the third call's time has started: still one timer.
    await jest.advanceTimersByTimeAsync(1);
    expect(jest.getTimerCount()).toBe(1);
    await jest.advanceTimersByTimeAsync(49 + LATER);
    expect([first.settled, second.settled, third.settled]).toEqual([true, false, false]);
    expect(jest.getTimerCount()).toBe(1);
    await jest.advanceTimersByTimeAsync(99);
    expect(second.settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect([second.settled, third.settled]).toEqual([true, false]);
    await jest.advanceTimersByTimeAsync(100);
    expect(third.settled).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  test('a thousand calls in flight share one timer', async () => {
    const { store, limiter } = setup();
    store.health = 'hang';
    const calls = Array.from({ length: 1000 }, (_, i) => track(limiter.consume(`s${i}`)));
    await jest.advanceTimersByTimeAsync(1);
    expect(jest.getTimerCount()).toBe(1);
    await jest.advanceTimersByTimeAsync(249 + LATER - 1);
    expect(calls.some((c) => c.settled)).toBe(false);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls.every((c) => c.settled && c.value?.degraded === true)).toBe(true);
    expect(jest.getTimerCount()).toBe(0);
  });

  test('answers in time are the store decisions, and leave no timer behind', async () => {
    const { store, limiter } = setup();
    const decisions: Decision[] = [];
    for (let i = 0; i < 6; i++) decisions.push(await limiter.consume('a'));
    expect(store.calls.consume).toBe(6);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    expect(decisions.every((d) => d.degraded === undefined)).toBe(true);
    await jest.advanceTimersByTimeAsync(250);
    expect(jest.getTimerCount()).toBe(0);
  });

  test('a late answer is ignored', async () => {
    const { store, limiter } = setup();
    store.health = 'hang';
    const call = track(limiter.consume('a'));
    await jest.advanceTimersByTimeAsync(250 + LATER);
    const decision = call.value!;
    store.answerHung('resolve');
    await jest.advanceTimersByTimeAsync(0);
    expect(decision).toMatchObject({ allowed: true, degraded: true });
    expect(call.value).toBe(decision);
  });

  test('a late rejection never becomes an unhandled rejection', async () => {
    const { store, limiter } = setup();
    store.health = 'hang';
    const calls = [track(limiter.consume('a')), track(limiter.consume('b'))];
    await jest.advanceTimersByTimeAsync(250 + LATER);
    store.answerHung('reject');
    await jest.advanceTimersByTimeAsync(10);
    expect(calls.every((c) => c.value?.degraded === true && c.error === undefined)).toBe(true);
  });

  test('refund, release and reset settle within storeTimeout on a hanging store, and resolve', async () => {
    const store = new ControlledStore();
    const limiter = createLimiter({ limit: 2, window: '1m', algorithm: 'concurrency', store });
    const decision = await limiter.consume('a');
    store.health = 'hang';
    const calls = [track(decision.refund!()), track(decision.release!()), track(limiter.reset('a'))];
    await jest.advanceTimersByTimeAsync(249 + LATER);
    expect(calls.map((c) => c.settled)).toEqual([false, false, false]);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls.map((c) => c.settled)).toEqual([true, true, true]);
    expect(calls.map((c) => c.error)).toEqual([undefined, undefined, undefined]);
    expect(store.calls).toMatchObject({ refund: 2, reset: 1 });
    store.answerHung('reject');
    await jest.advanceTimersByTimeAsync(10);
  });
});

describe('a store that writes its calls later than their turn (Store.afterSent)', () => {
  /** A ControlledStore whose calls are written when the test says (RedisStore on node-redis, paced). */
  class WritingLaterStore extends ControlledStore {
    private waiting: Array<() => void> = [];
    afterSent(task: () => void): void {
      this.waiting.push(task);
    }
    written(): void {
      const tasks = this.waiting;
      this.waiting = [];
      for (const task of tasks) task();
    }
  }

  // The hostile review of d942ce9: a handler held the process past storeTimeout before node-redis wrote
  // a turn's later batches, and their calls failed for time the store never had.
  test("calls' storeTimeout starts once the store has written them, not when their turn is over", async () => {
    const { store, limiter } = setup(250, new WritingLaterStore());
    store.health = 'hang';
    const first = track(limiter.consume('a'));
    // Not written for 200 ms (within the one storeTimeout a store that never says is given).
    await jest.advanceTimersByTimeAsync(200);
    expect(first.settled).toBe(false);
    store.written();
    await jest.advanceTimersByTimeAsync(249);
    expect(first.settled).toBe(false);
    store.answerHung('resolve');
    await jest.advanceTimersByTimeAsync(LATER);
    expect(first.value).toMatchObject({ allowed: true, remaining: 4 });
    expect(first.value?.degraded).toBeUndefined();

    // Once written, its time runs as any call's: a store that does not answer fails it at storeTimeout.
    const second = track(limiter.consume('a'));
    await jest.advanceTimersByTimeAsync(LATER);
    store.written();
    await jest.advanceTimersByTimeAsync(250 + LATER);
    expect(second.value).toMatchObject({ allowed: true, degraded: true });
  });
});

describe('a store whose afterSent never says, or throws', () => {
  // Hostile review of aa81248: a wrapper store forwarding afterSent to a store without one dropped the
  // task, and Deadlines, trusting it, never started the calls' time: a store that never answered hung
  // them for ever (still pending after 2 s, storeTimeout 50 ms).
  test('a task never run: the calls still fail over, one storeTimeout late at most', async () => {
    class Dropping extends ControlledStore {
      afterSent(_task: () => void): void {}
    }
    const { store, limiter } = setup(250, new Dropping());
    store.health = 'hang';
    const call = track(limiter.consume('a'));
    await jest.advanceTimersByTimeAsync(250 + LATER);
    expect(call.settled).toBe(false);
    await jest.advanceTimersByTimeAsync(250 + LATER);
    expect(call.value).toMatchObject({ allowed: true, degraded: true });
  });

  test("an afterSent that throws: the calls' time starts at the end of their turn", async () => {
    class Throwing extends ControlledStore {
      afterSent(): void {
        throw new Error('afterSent broke');
      }
    }
    const { store, limiter } = setup(250, new Throwing());
    store.health = 'hang';
    const call = track(limiter.consume('a'));
    await jest.advanceTimersByTimeAsync(250 + LATER);
    expect(call.value).toMatchObject({ allowed: true, degraded: true });
  });
});

describe('Deadlines: a chain emptied by expiry while its stamp waits', () => {
  // Hostile review of f886232: a call in flight expires; in the turn its expiry waited for, a call that
  // settles at once (a reset with no subject keys) starts a chain whose stamp waits on afterSent. The
  // expiry emptied the list but left that chain marked unstamped, so the next call joined it without a
  // turn of its own, and the stale stamp, reaching only the settled call, never gave it a deadline:
  // it and every later call waited for the store for ever (Redis paused: hung past 1.5 s at 50 ms).
  test('the next call still gets a deadline and fails at storeTimeout', async () => {
    let hold = false;
    const held: Array<() => void> = [];
    const deadlines = new Deadlines(50, (task) => (hold ? held.push(task) : task()));
    const failed: string[] = [];
    const never = new Promise<never>(() => {});
    deadlines.watch(
      never,
      () => {},
      () => failed.push('first'),
    );
    await jest.advanceTimersByTimeAsync(1);
    // Queued after the deadline's timer (armed at the stamp): it runs once that timer has deferred the
    // expiry by a turn.
    setTimeout(() => {
      hold = true;
      deadlines.watch(
        Promise.resolve(),
        () => {},
        () => failed.push('settled'),
      );
    }, 49);
    await jest.advanceTimersByTimeAsync(49 + LATER);
    expect(failed).toEqual(['first']);
    deadlines.watch(
      never,
      () => {},
      () => failed.push('next'),
    );
    await jest.advanceTimersByTimeAsync(LATER);
    hold = false;
    for (const task of held.splice(0)) task();
    await jest.advanceTimersByTimeAsync(50 + LATER);
    expect(failed).toEqual(['first', 'next']);
  });
});

describe('a store getting ready (Store.ready)', () => {
  /** A ControlledStore that is not ready until the test says, as PostgresStore before its first connection. */
  class StartingStore extends ControlledStore {
    private starting: Promise<void> | undefined;
    finish!: (error?: Error) => void;
    constructor() {
      super();
      this.starting = new Promise<void>((resolve, reject) => {
        this.finish = (error) => (error === undefined ? resolve() : reject(error));
      }).finally(() => {
        this.starting = undefined;
      });
    }
    ready(): Promise<void> | undefined {
      return this.starting;
    }
  }

  test('calls wait for it outside storeTimeout, then are decided by the store', async () => {
    const store = new StartingStore();
    const limiter = createLimiter({
      limit: 5,
      window: '1m',
      store,
      storeTimeout: 250,
      onStoreError: 'allow',
    });
    const consume = track(limiter.consume('a'));
    const reset = track(limiter.reset('b'));
    await jest.advanceTimersByTimeAsync(1000);
    expect([consume.settled, reset.settled, store.calls.consume, store.calls.reset]).toEqual([
      false,
      false,
      0,
      0,
    ]);
    store.finish();
    await jest.advanceTimersByTimeAsync(LATER);
    expect(consume.value).toMatchObject({ allowed: true, remaining: 4 });
    expect(consume.value?.degraded).toBeUndefined();
    expect(store.calls).toMatchObject({ consume: 1, reset: 1 });
  });

  test('a store that cannot get ready: the calls waiting follow onStoreError', async () => {
    const store = new StartingStore();
    const limiter = createLimiter({ limit: 5, window: '1m', store, onStoreError: 'deny' });
    const consume = track(limiter.consume('a'));
    store.finish(new Error('could not connect'));
    await jest.advanceTimersByTimeAsync(LATER);
    expect(consume.value).toMatchObject({ allowed: false, degraded: true, reason: 'store-error' });
    expect(store.calls.consume).toBe(0);
  });

  // A custom store's ready() is guarded as its calls are (found by a hostile review of fdd233c: a throw
  // rejected consume(), a ready() that never settled left consume() pending for ever).
  test('a ready() that throws is the store failing: onStoreError decides, consume() resolves', async () => {
    const store = new ControlledStore();
    Object.assign(store, {
      ready: () => {
        throw new Error('ready() broke');
      },
    });
    const limiter = createLimiter({ limit: 5, window: '1m', store, onStoreError: 'deny' });
    const consume = track(limiter.consume('a'));
    await jest.advanceTimersByTimeAsync(LATER);
    expect(consume.value).toMatchObject({ allowed: false, degraded: true, reason: 'store-error' });
  });

  test('a ready() that never settles fails its calls over after 5 s, not never', async () => {
    const store = new ControlledStore();
    Object.assign(store, { ready: () => new Promise<void>(() => {}) });
    const limiter = createLimiter({ limit: 5, window: '1m', store, onStoreError: 'allow' });
    const consume = track(limiter.consume('a'));
    await jest.advanceTimersByTimeAsync(4999);
    expect(consume.settled).toBe(false);
    await jest.advanceTimersByTimeAsync(1 + LATER);
    expect(consume.value).toMatchObject({ allowed: true, degraded: true });
    expect(store.calls.consume).toBe(0);
  });
});

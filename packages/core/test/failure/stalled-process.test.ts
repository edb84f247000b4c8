import { createLimiter } from '@sluice/core';
import { busy } from '../../../../test/support/clock.js';
import { expectOnlyWarnings } from '../../../../test/support/warnings.js';
import { ControlledStore } from './controlled-store.js';
import { track, watchUnhandledRejections } from './promises.js';

// The hanging store is warned about when its call fails: captured, nothing else.
expectOnlyWarnings('ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_RECOVERED');

const unhandled = watchUnhandledRejections();
afterEach(() => expect(unhandled).toEqual([]));

const STORE_TIMEOUT_MS = 100;
const BUSY_MS = 300;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Until `call` has settled, looking every 5 ms (real timers). */
async function settled(call: { settled: boolean }): Promise<void> {
  while (!call.settled) await new Promise((resolve) => setTimeout(resolve, 5));
}

/**
 * Real timers: a stall is a timer firing late, which fake timers never do. The store answers a few
 * milliseconds after the stall, as a client that writes a turn late (node-redis writes at setImmediate)
 * gets its answer: on 51bfc66 the overdue call had already failed (one turn after its late timer).
 * Whatever the machine's load, the answer's timer is due before the deadline given back.
 */
describe('a process stalled across a deadline', () => {
  test('a call answered just after the stall is the store’s', async () => {
    const store = new ControlledStore();
    const limiter = createLimiter({ limit: 5, window: '1m', store, storeTimeout: STORE_TIMEOUT_MS });
    store.health = 'hang';
    const call = track(limiter.consume('a'));
    // Sent, and its time started (the end of the turn that made it).
    await turn();
    await turn();
    busy(BUSY_MS);
    setTimeout(() => store.answerHung('resolve'), 5);
    await settled(call);
    expect(call.value).toMatchObject({ allowed: true, remaining: 4 });
    expect(call.value?.degraded).toBeUndefined();
  });

  test('a store that does not answer still fails the call, soon after', async () => {
    const store = new ControlledStore();
    const limiter = createLimiter({
      limit: 5,
      window: '1m',
      store,
      storeTimeout: STORE_TIMEOUT_MS,
      onStoreError: 'deny',
    });
    store.health = 'hang';
    const call = track(limiter.consume('a'));
    await turn();
    await turn();
    busy(BUSY_MS);
    const resumed = performance.now();
    await settled(call);
    expect(call.value).toMatchObject({ allowed: false, degraded: true, reason: 'store-error' });
    // At most a quarter of storeTimeout given back, and the process's own lateness since (it is a
    // bound on this process, so measured from when it ran again: generous for a loaded machine).
    expect(performance.now() - resumed).toBeLessThan(STORE_TIMEOUT_MS / 4 + 1000);
    store.answerHung('resolve');
  });
});

import { createLimiter, type Limiter, MemoryStore, type Store } from '@sluice/core';
import { manualClock } from '@sluice/core/testing';
import { expectOnlyWarnings } from '../support/warnings.js';

/**
 * What `onStoreError: 'local'` (the default) lets through during an outage, through the public API:
 * the numbers docs/deployment.md ("When the store fails") states come from here.
 *
 * One shared store (Redis) behind two processes: each process is a limiter on a store object of its
 * own (its own client) over one backing MemoryStore, which the test can take down. 5 clients, a limit
 * of 50 per client per hour (a window the test never leaves: the manual clock moves 2 s in all).
 */
const CLIENTS = ['c1', 'c2', 'c3', 'c4', 'c5'];
const LIMIT = 50;

// Each process says once that it lost its store, and once that it is back.
expectOnlyWarnings('ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_RECOVERED');

function sharedStore() {
  const clock = manualClock();
  const backing = new MemoryStore({ clock });
  const state = { down: false };
  const outage = () => Promise.reject(new Error('ECONNREFUSED'));
  /** One process's client of the shared store. */
  const client = (): Store => ({
    local: false,
    clock,
    consume: (call) => (state.down ? outage() : Promise.resolve(backing.consume(call))),
    refund: (call) => (state.down ? outage() : Promise.resolve(backing.refund(call))),
    reset: (limiter, subject) => (state.down ? outage() : Promise.resolve(backing.reset(limiter, subject))),
  });
  return { clock, state, client };
}

/** How many of `n` requests of each client the limiter admits. */
async function admitted(limiter: Limiter, n: number): Promise<number> {
  let allowed = 0;
  for (const client of CLIENTS) {
    for (let i = 0; i < n; i++) if ((await limiter.consume(client)).allowed) allowed++;
  }
  return allowed;
}

describe("onStoreError 'local' during an outage", () => {
  test('two processes, one outage: 5 clients x 50 requests each admit 500, twice the limit in one window', async () => {
    const { state, client } = sharedStore();
    const processes = [0, 1].map(() => createLimiter({ limit: LIMIT, window: '1h', store: client() }));
    // Up: the two processes share one limit, 250 for 5 clients, however the requests are spread.
    const up = sharedStore();
    const sharing = [0, 1].map(() => createLimiter({ limit: LIMIT, window: '1h', store: up.client() }));
    expect((await admitted(sharing[0]!, LIMIT)) + (await admitted(sharing[1]!, LIMIT))).toBe(250);

    state.down = true;
    const during = (await admitted(processes[0]!, LIMIT)) + (await admitted(processes[1]!, LIMIT));
    // Every process gives every client a fresh in-process quota: 2 x 5 x 50.
    expect(during).toBe(500);
    // Each still limits on its own: the 51st request of a client is refused, degraded.
    expect(await processes[0]!.consume('c1')).toMatchObject({ allowed: false, degraded: true });
  });

  test('one process: what it admitted in the outage is not in the store, so the store gives the quota again', async () => {
    const { clock, state, client } = sharedStore();
    const limiter = createLimiter({ limit: LIMIT, window: '1h', store: client() });
    state.down = true;
    expect(await admitted(limiter, LIMIT)).toBe(250);
    state.down = false;
    clock.advance(2000); // the circuit's probe (one a second) finds the store back
    await limiter.consume('probe');
    // Back on the store, in the same window: each client gets its 50 again. 500 in the window, not 250.
    expect(await admitted(limiter, LIMIT)).toBe(250);
    expect((await limiter.consume('c1')).degraded).toBeUndefined();
  });
});

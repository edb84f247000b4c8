import { createLimiter, MemoryStore, type Policy, type Store } from '@sluice/core';
import { runTrace, tracesFor } from '@sluice/core/testing';

/**
 * The deny cache answers only what the store would (API.md r2): with it on (the default), a limiter on
 * a remote store decides every step of a random trace exactly as one on MemoryStore at the same clock,
 * decisions compared whole: costs from 1 to capacity + 1, refunds, releases, resets and peeks. Written
 * once for every remote store (the Redis and Postgres suites run it). Resolves with how many denials
 * the cache could have answered: a run with none would prove nothing.
 */
export async function expectDenyCacheParity(
  policies: Policy[],
  makeStore: (clock: () => number) => Store,
  prefixOf: () => string,
): Promise<number> {
  let cacheable = 0;
  for (const trace of tracesFor(policies, { maxCost: capacityOf(policies) + 1, seeds: [1, 2, 3, 4] })) {
    const memory = await runTrace(
      (clock) => createLimiter({ policies, store: new MemoryStore({ clock }) }),
      trace,
    );
    const prefix = prefixOf();
    const remote = await runTrace(
      (clock) => createLimiter({ policies, prefix, storeTimeout: '10s', store: makeStore(clock) }),
      trace,
    );
    for (let i = 0; i < trace.length; i++) {
      if (JSON.stringify(remote[i]) !== JSON.stringify(memory[i])) {
        throw new Error(
          `step ${i} ${JSON.stringify(trace[i])}: the store ${JSON.stringify(remote[i])} but memory ${JSON.stringify(memory[i])}`,
        );
      }
    }
    // Two denials in a row for one subject at one cost: what the cache may answer.
    cacheable += memory.filter((r, i) => r !== null && !r.allowed && memory[i - 1]?.allowed === false).length;
  }
  return cacheable;
}

/** The largest capacity among `policies`: a cost one above it can never be allowed. */
function capacityOf(policies: readonly Policy[]): number {
  return Math.max(...policies.map((p) => p.burst ?? p.limit));
}

import { createLimiter, MemoryStore, type Policy, RedisStore } from '@sluice/core';
import { multiPolicySets, runTrace, singlePolicySets, tracesFor } from '@sluice/core/testing';
import { describeRedis } from '../../../../test/support/redis.js';
import { allowWarnings } from '../../../../test/support/warnings.js';
import { CLIENTS_AND_BACKENDS, closeClients, sharedClient, uniquePrefix } from './clients.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');

/**
 * The deny cache answers only what Redis would (API.md r2): with it on (the default), a limiter on
 * RedisStore decides every step of a random trace exactly as one on MemoryStore at the same clock,
 * decisions compared whole: costs from 1 to capacity + 1, refunds, releases, resets and peeks. Before
 * 0.2 a cached denial answered larger costs and outlived changes of `remaining`; traces mixing costs
 * differed for every algorithm (failed on 13f5928).
 */
describeRedis('RedisStore with its deny cache decides as MemoryStore', () => {
  afterAll(closeClients);

  describe.each(
    [...singlePolicySets, ...multiPolicySets].map((s): [string, Policy[]] => [s.label, [...s.policies]]),
  )('%s', (_label, policies) => {
    test.each(CLIENTS_AND_BACKENDS)('%s, %s: the same decision at every step', async (name, backend) => {
      const client = await sharedClient(name, backend);
      let cacheable = 0;
      for (const trace of tracesFor(policies, { maxCost: capacityOf(policies) + 1, seeds: [1, 2, 3, 4] })) {
        const memory = await runTrace(
          (clock) => createLimiter({ policies, store: new MemoryStore({ clock }) }),
          trace,
        );
        const prefix = uniquePrefix('deny-parity');
        const redis = await runTrace(
          (clock) =>
            createLimiter({
              policies,
              prefix,
              storeTimeout: '10s',
              store: new RedisStore({ client, clock }),
            }),
          trace,
        );
        for (let i = 0; i < trace.length; i++) {
          if (JSON.stringify(redis[i]) !== JSON.stringify(memory[i])) {
            throw new Error(
              `step ${i} ${JSON.stringify(trace[i])}: Redis ${JSON.stringify(redis[i])} but memory ${JSON.stringify(memory[i])}`,
            );
          }
        }
        // Two denials in a row for one subject at one cost: what the cache may answer.
        cacheable += memory.filter(
          (r, i) => r !== null && !r.allowed && memory[i - 1]?.allowed === false,
        ).length;
      }
      expect(cacheable).toBeGreaterThan(0);
    });
  });
});

/** The largest capacity among `policies`: a cost one above it can never be allowed. */
function capacityOf(policies: readonly Policy[]): number {
  return Math.max(...policies.map((p) => p.burst ?? p.limit));
}

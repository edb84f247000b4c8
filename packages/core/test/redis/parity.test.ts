import { RedisStore } from '@sluice/core';
import { checkStoreParity } from '@sluice/core/testing';
import { describeRedis } from '../../../../test/support/redis.js';
import { clientsTaking, paritySets, SECONDARY_TRACES } from '../../../../test/support/traces.js';
import { allowWarnings } from '../../../../test/support/warnings.js';
import { CLIENTS_AND_BACKENDS, closeClients, sharedClient, uniquePrefix } from './clients.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');

/**
 * RedisStore passes the store conformance kit (@sluice/core/testing) on every client, standalone and
 * cluster: the same random traces on a manual clock give identical store answers and identical
 * decisions on MemoryStore and RedisStore, for every algorithm alone and multi-policy limiters with a
 * global policy, concurrency leases, refunds, releases, resets and peeks. ioredis takes every set, the
 * kit's 8 traces each; the other clients, which share the script and differ only in how arguments and
 * replies cross the wire, the multi-policy sets (every algorithm between them), 4 traces (one per pace
 * of the clock) of half the length.
 */
// Eight traces against a cluster took over 30 s (the default) with the machine at load average 14;
// the limit is there to catch a hang, not to time the store.
jest.setTimeout(120_000);

describeRedis('RedisStore parity with MemoryStore', () => {
  afterAll(closeClients);

  describe.each(paritySets(true).map((set) => [set.label, set] as const))('%s', (_label, set) => {
    test.each(clientsTaking(set, CLIENTS_AND_BACKENDS, ([name]) => name === 'ioredis'))(
      '%s, %s: the same answer to every store call, the same decision at every step',
      async (name, backend) => {
        const client = await sharedClient(name, backend);
        const report = await checkStoreParity((clock) => new RedisStore({ client, clock }), {
          policySets: [set],
          prefix: uniquePrefix('parity'),
          ...(name === 'ioredis' ? {} : SECONDARY_TRACES),
        });
        // The traces decide something: ones that only ever allow, or never give back, would prove little.
        expect(report.denials).toBeGreaterThan(report.traces);
        expect(report.refunds).toBeGreaterThanOrEqual(report.traces);
      },
    );
  });
});

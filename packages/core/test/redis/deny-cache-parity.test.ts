import { RedisStore } from '@sluice/core';
import { describeRedis } from '../../../../test/support/redis.js';
import { clientsTaking, paritySets } from '../../../../test/support/traces.js';
import { allowWarnings } from '../../../../test/support/warnings.js';
import { expectDenyCacheParity } from '../conformance/deny-cache-parity.js';
import { ADAPTERS_AND_BACKENDS, closeClients, sharedClient, uniquePrefix } from './clients.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');
// A trace over @upstash/redis is an HTTP request a step through the stand-in: it outlasted the default
// 30 s at load average 12 (CI beside other work). The limit is there to catch a hang, as in parity.test.ts.
jest.setTimeout(120_000);

/**
 * The deny cache answers only what Redis would (API.md r2): a limiter on RedisStore with its deny
 * cache on decides every step of a random trace exactly as one on MemoryStore (expectDenyCacheParity).
 * Before 0.2 a cached denial answered larger costs and outlived changes of `remaining`; traces mixing
 * costs differed for every algorithm (failed on 13f5928). On one client of each protocol adapter, on
 * both backends, as parity.test.ts picks its sets (ioredis every set, the others the multi-policy ones):
 * the cache is Sluice's, above the wire, which parity.test.ts crosses with every client.
 */
describeRedis('RedisStore with its deny cache decides as MemoryStore', () => {
  afterAll(closeClients);

  describe.each(paritySets(true).map((set) => [set.label, set] as const))('%s', (_label, set) => {
    const rows = clientsTaking(set, ADAPTERS_AND_BACKENDS, ([name]) => name === 'ioredis');
    test.each(rows)('%s, %s: the same decision at every step', async (name, backend) => {
      const client = await sharedClient(name, backend);
      const cacheable = await expectDenyCacheParity(
        [...set.policies],
        (clock) => new RedisStore({ client, clock }),
        () => uniquePrefix('deny-parity'),
      );
      expect(cacheable).toBeGreaterThan(0);
    });
  });
});

import { type Policy, RedisStore } from '@sluice/core';
import { multiPolicySets, singlePolicySets } from '@sluice/core/testing';
import { describeRedis } from '../../../../test/support/redis.js';
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
 * both backends: the cache is Sluice's, above the wire, which parity.test.ts crosses with every client.
 */
describeRedis('RedisStore with its deny cache decides as MemoryStore', () => {
  afterAll(closeClients);

  describe.each(
    [...singlePolicySets, ...multiPolicySets].map((s): [string, Policy[]] => [s.label, [...s.policies]]),
  )('%s', (_label, policies) => {
    test.each(ADAPTERS_AND_BACKENDS)('%s, %s: the same decision at every step', async (name, backend) => {
      const client = await sharedClient(name, backend);
      const cacheable = await expectDenyCacheParity(
        policies,
        (clock) => new RedisStore({ client, clock }),
        () => uniquePrefix('deny-parity'),
      );
      expect(cacheable).toBeGreaterThan(0);
    });
  });
});

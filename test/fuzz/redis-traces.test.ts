import { RedisStore } from '@sluice/core';
import type { Cluster, Redis } from 'ioredis';
import {
  closeClients,
  clusterClient,
  standaloneClient,
  uniquePrefix,
} from '../../packages/core/test/redis/clients.js';
import fc from '../support/fast-check.js';
import { describeRedis, sharedCluster, sharedRedis } from '../support/redis.js';
import { allowWarnings } from '../support/warnings.js';
import { ALGORITHMS, neverOverTheLimit, onePolicy, type Placement, severalPolicies } from './traces.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');

/** Each step is a round trip: fewer runs than on the memory store, the same property. */
const RUNS = 40;

/** A fresh prefix per run on a shared server; a generous timeout so no decision falls back to memory. */
const on =
  (client: () => Redis | Cluster): Placement =>
  (clock) => ({
    store: new RedisStore({ client: client(), clock }),
    prefix: uniquePrefix('fuzz'),
    storeTimeout: '10s',
  });

describeRedis('random traces on Redis never go over the limit', () => {
  let standalone: Redis;
  let cluster: Cluster;

  beforeAll(async () => {
    standalone = standaloneClient(await sharedRedis());
    cluster = clusterClient(await sharedCluster());
  });
  afterAll(closeClients);

  it.each(ALGORITHMS)('%s, standalone', async (algorithm) => {
    await fc.assert(
      neverOverTheLimit(
        onePolicy(algorithm),
        on(() => standalone),
      ),
      { numRuns: RUNS },
    );
  });

  it.each(ALGORITHMS)('%s, standalone, with refunds as common as calls', async (algorithm) => {
    await fc.assert(
      neverOverTheLimit(
        onePolicy(algorithm),
        on(() => standalone),
        'many',
      ),
      { numRuns: RUNS },
    );
  });

  it('several policies decided together, standalone', async () => {
    await fc.assert(
      neverOverTheLimit(
        severalPolicies,
        on(() => standalone),
      ),
      { numRuns: RUNS * 2 },
    );
  });

  it('several policies decided together, cluster', async () => {
    await fc.assert(
      neverOverTheLimit(
        severalPolicies,
        on(() => cluster),
      ),
      { numRuns: RUNS * 2 },
    );
  });
});

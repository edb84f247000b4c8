import { createLimiter, type Decision, type OnStoreError, RedisStore } from '@sluice/core';
import {
  type ClientName,
  closeClients,
  connectClient,
  STANDALONE_CLIENT_NAMES,
  uniquePrefix,
} from '../../packages/core/test/redis/clients.js';
import { describeRedis, type RedisProcess, startRedis } from '../support/redis.js';
import { expectOnlyWarnings } from '../support/warnings.js';

// Redis stalls past storeTimeout here: the outage and recovery warnings are expected, captured.
expectOnlyWarnings('ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_RECOVERED');

// A call that outlived storeTimeout was decided by onStoreError, but Redis still ran it once the stall
// ended, and its charge stayed: a concurrency lease pinned the subject for the whole window with
// nothing in flight, 'deny' refusals used up the quota, 'local' counted each request twice (failed on
// d34be6e: remaining 0 after the stall, for every mode and algorithm). A late answer that charged is
// now given back, on every client.
describeRedis('a store answer that comes after storeTimeout charges nothing', () => {
  let server: RedisProcess;

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    server.resume();
    await closeClients();
    await server.stop();
  });

  const modes: OnStoreError[] = ['deny', 'allow', 'local'];
  const runs = STANDALONE_CLIENT_NAMES.flatMap((name) =>
    modes.map((mode) => [name, mode] as [ClientName, OnStoreError]),
  );

  test.each(runs)(
    "%s, onStoreError '%s': Redis stalls past storeTimeout, then runs the calls",
    async (name, mode) => {
      const limiter = createLimiter({
        policies: [
          { limit: 2, window: '1m', algorithm: 'concurrency' },
          { limit: 2, window: '1m', algorithm: 'sliding-window' },
        ],
        prefix: uniquePrefix('late'),
        store: new RedisStore({ client: await connectClient(name, { url: server.url }) }),
        storeTimeout: '100ms',
        onStoreError: mode,
      });
      // Stalled until the calls have been decided without it: a CLIENT PAUSE of 500 ms ended in time
      // for a call on a loaded CI machine (3334393), and Redis decided it.
      server.pause();
      const during: Decision[] = await Promise.all([limiter.consume('u'), limiter.consume('u')]);
      // What the adapters do when the responses end.
      await Promise.all(during.map((d) => (d.release ?? d.refund)?.()));
      server.resume();
      expect(during.every((d) => d.degraded === true)).toBe(true);

      // Once Redis runs the stalled calls, their answers come back late and are given back.
      let seen: Decision | undefined;
      for (let i = 0; i < 100; i++) {
        seen = await limiter.peek('u');
        if (!seen.degraded && seen.remaining === 2) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(seen).toMatchObject({ allowed: true, remaining: 2 });
      expect(seen!.degraded).toBeUndefined();
      const next = await limiter.consume('u');
      expect(next).toMatchObject({ allowed: true, remaining: 1 });
      expect(next.degraded).toBeUndefined();
    },
  );
});

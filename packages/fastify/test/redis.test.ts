import { RedisStore } from '@sluice/core';
import sluice from '@sluice/fastify';
import { HEADER_CASES_NOW, headerCases } from '../../../test/fixtures/header-cases.js';
import { describeRedis, type RedisProcess, startRedis, suiteRedis } from '../../../test/support/redis.js';
import { recordWarnings } from '../../../test/support/warnings.js';
import { closeClients, standaloneClient, uniquePrefix } from '../../core/test/redis/clients.js';
import { alignedClock, checkHeaderCase, frameworks, type MakeApp, recording } from './support.js';

// On a remote store every decision is a promise: these run the adapter's asynchronous path.
describeRedis('Fastify plugin on a RedisStore', () => {
  let url: string;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ url, stop } = await suiteRedis());
  });
  afterAll(async () => {
    await closeClients();
    await stop();
  });

  describe.each(frameworks)('%s', (_, makeApp: MakeApp) => {
    // The ban case too: a denial's strike is in Redis before it is answered, so the next request is banned.
    test.each(headerCases.map((c) => [c.title, c] as const))('the shared header table: %s', (_title, c) => {
      const store = new RedisStore({ client: standaloneClient(url), clock: () => HEADER_CASES_NOW });
      // A generous timeout: on a loaded machine a call past the default 250 ms was decided in process
      // (a fresh local quota: the third request of 'denied by a policy' got 200 on Fastify 4).
      return checkHeaderCase(makeApp, c, store, {
        prefix: uniquePrefix('fastify-headers'),
        storeTimeout: '5s',
      });
    });

    test('two app instances on one Redis share one limit', async () => {
      const prefix = uniquePrefix('fastify-shared');
      const clock = alignedClock();
      const apps = await Promise.all(
        [0, 1].map(async () => {
          const app = makeApp();
          await app.register(sluice, {
            limit: 3,
            window: '1m',
            storeTimeout: '5s',
            prefix,
            store: new RedisStore({ client: standaloneClient(url), clock }),
          });
          app.get('/', async () => 'ok');
          return app;
        }),
      );
      const answers: number[] = [];
      for (let i = 0; i < 6; i++)
        answers.push((await apps[i % 2]!.inject({ method: 'GET', url: '/' })).statusCode);
      expect(answers).toEqual([200, 200, 200, 429, 429, 429]);
      await Promise.all(apps.map((app) => app.close()));
    });

    test('concurrency leases on Redis are given back after each response, once', async () => {
      const store = recording(new RedisStore({ client: standaloneClient(url), clock: alignedClock() }));
      const app = makeApp();
      await app.register(sluice, {
        limit: 1,
        window: '1m',
        algorithm: 'concurrency',
        storeTimeout: '5s',
        prefix: uniquePrefix('fastify-lease'),
        store,
      });
      app.get('/', async () => 'ok');
      for (let i = 0; i < 5; i++) {
        expect((await app.inject({ method: 'GET', url: '/' })).statusCode).toBe(200);
        // The release is sent when the response finishes; the next request must find the lease gone.
        for (let wait = 0; store.refunds < i + 1 && wait < 100; wait++)
          await new Promise((r) => setTimeout(r, 10));
      }
      expect(store.refunds).toBe(5);
      await app.close();
    });

    describe('Redis stopped', () => {
      const warnings = recordWarnings();
      let server: RedisProcess;
      beforeAll(async () => {
        server = await startRedis();
      });
      afterAll(async () => {
        await server.stop();
      });

      test("onStoreError 'deny': 503 with Retry-After 1; 'local': decided in process", async () => {
        const client = standaloneClient(server.url);
        await client.ping();
        const apps = await Promise.all(
          (['deny', 'local'] as const).map(async (onStoreError) => {
            const app = makeApp();
            await app.register(sluice, {
              limit: 1,
              window: '1m',
              onStoreError,
              storeTimeout: '100ms',
              prefix: uniquePrefix('fastify-down'),
              store: new RedisStore({ client }),
            });
            app.get('/', async () => 'ok');
            return app;
          }),
        );
        await server.stop();
        const [deny, local] = apps;
        const refused = await deny!.inject({ method: 'GET', url: '/' });
        expect(refused.statusCode).toBe(503);
        expect(refused.headers['retry-after']).toBe('1');
        expect(refused.json()).toMatchObject({ status: 503 });
        const fallback = [
          (await local!.inject({ method: 'GET', url: '/' })).statusCode,
          (await local!.inject({ method: 'GET', url: '/' })).statusCode,
        ];
        expect(fallback).toEqual([200, 429]);
        // Each limiter said once that it lost its store.
        expect(warnings.codes).toEqual(['ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_DEGRADED']);
        await Promise.all(apps.map((app) => app.close()));
      });
    });
  });
});

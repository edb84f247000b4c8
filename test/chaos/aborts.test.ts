import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AlgorithmName, RedisStore } from '@sluice/core';
import { type RateLimiterOptions, rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import { Redis } from 'ioredis';
import { expressVersions } from '../../packages/express/test/support.js';
import { frameworks } from '../../packages/fastify/test/frameworks.js';
import { ALGORITHMS } from '../fuzz/traces.js';
import { hangUps, probe as newProbe, type Probe, work } from '../support/aborting-clients.js';
import { describeRedis, type RedisProcess, startRedis } from '../support/redis.js';
import { expectOnlyWarnings } from '../support/warnings.js';

// A paused Redis may be past storeTimeout on a loaded machine: those warnings are expected, captured.
expectOnlyWarnings('ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_RECOVERED');

/**
 * Clients that misbehave against Express and Fastify on a Redis store of their own:
 * - an abort storm: clients that hang up mid-request, on every algorithm, with skipFailedRequests on
 *   and handlers that fail after their clients left: never more handlers admitted than the limit, never
 *   more in flight than a concurrency limit;
 * - a slow Redis (CLIENT PAUSE) behind a timeout middleware that answers first: late decisions give
 *   their charge back and nothing crashes.
 * No unhandled rejection in the process throughout.
 */
jest.setTimeout(60_000);

const LIMIT = 3;
const WORK_MS = 200;

interface App {
  port: number;
  close(): Promise<void>;
}

/** A timeout middleware in front of the limiter, answering 503 after `ms` (read per request). */
interface Timeout {
  ms: number;
}

type Start = (options: RateLimiterOptions, probe: Probe, timeout?: Timeout) => Promise<App>;

const onExpress: Start = async (options, probe, timeout) => {
  const app = expressVersions[0]![1]();
  if (timeout !== undefined) {
    app.use((_req, res, next) => {
      const timer = setTimeout(() => res.headersSent || res.status(503).send('timeout'), timeout.ms);
      res.once('close', () => clearTimeout(timer));
      next();
    });
  }
  app.use(rateLimiter(options));
  app.get('/', async (_req, res) => {
    await work(probe, WORK_MS);
    if (!res.headersSent) res.status(500).send('failed');
  });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};

const onFastify: Start = async (options, probe, timeout) => {
  const app = frameworks[0]![1]();
  if (timeout !== undefined) {
    app.addHook('onRequest', (_request, reply, done) => {
      const timer = setTimeout(() => reply.sent || reply.code(503).send('timeout'), timeout.ms);
      reply.raw.once('close', () => clearTimeout(timer));
      done();
    });
  }
  await app.register(sluice, options as never);
  app.get('/', async (_request, reply) => {
    await work(probe, WORK_MS);
    if (!reply.sent) return reply.code(500).send('failed');
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
};

describeRedis('chaos: clients that abort, and a slow Redis behind a timeout', () => {
  let redis: RedisProcess;
  let client: Redis;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  let prefix = 0;

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    redis = await startRedis();
    client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    client.disconnect();
    await redis.stop();
  });
  afterEach(() => expect(unhandled).toEqual([]));

  const base = (algorithm: AlgorithmName): RateLimiterOptions => ({
    store: new RedisStore({ client }),
    prefix: `aborts-${process.pid}-${prefix++}`,
    limit: LIMIT,
    // An hour, far longer than a test: a minute's fixed window that rolled over mid-test admitted LIMIT
    // more (Redis decides by its own clock here, on purpose: the path production takes).
    window: '1h',
    algorithm,
    storeTimeout: '2s',
    ...(algorithm === 'leaky-bucket' ? { delay: false } : {}),
  });

  describe.each([
    ['Express', onExpress],
    ['Fastify', onFastify],
  ])('%s', (_name, start) => {
    test.each(ALGORITHMS)('an abort storm on %s admits no more than the limit', async (algorithm) => {
      const probe = newProbe();
      const app = await start({ ...base(algorithm), skipFailedRequests: true }, probe);
      try {
        // 24 clients, three at a time, each gone after 30 ms while its handler works for 200 ms.
        const began = performance.now();
        for (let i = 0; i < 8; i++) await hangUps(app.port, 3, 30);
        const stormMs = performance.now() - began;
        await new Promise((resolve) => setTimeout(resolve, WORK_MS + 100));
        expect(probe.most).toBeLessThanOrEqual(LIMIT);
        // A rate policy's window outlasts the test: only a lease can come back, once its handler ended,
        // so LIMIT handlers start per WORK_MS of the storm (it took 240 ms quiet, longer at load 10:
        // a fixed 2 x LIMIT failed there with 7 run, never more than LIMIT at once).
        if (algorithm !== 'concurrency') expect(probe.ran).toBe(LIMIT);
        else expect(probe.ran).toBeLessThanOrEqual(LIMIT * (1 + Math.floor(stormMs / WORK_MS)));
      } finally {
        await app.close();
      }
    });

    test('a Redis slower than the timeout middleware: late decisions give their charge back', async () => {
      const probe = newProbe();
      const timeout = { ms: 50 };
      const app = await start(base('fixed-window'), probe, timeout);
      try {
        await client.call('CLIENT', 'PAUSE', '300', 'ALL');
        const answers = await Promise.all(
          Array.from({ length: 5 }, () => fetch(`http://127.0.0.1:${app.port}/`).then((r) => r.status)),
        );
        expect(answers).toEqual([503, 503, 503, 503, 503]);
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(probe.ran).toBe(0);
        // Every late charge came back: the whole limit is there. The timeout waits for the handlers
        // now: at 50 ms, a decision that Redis answered late on a loaded machine was (rightly) given
        // back too, and LIMIT handlers did not run (2 of 3, CI beside other work on 407aab6).
        timeout.ms = 10_000;
        const after = await Promise.all(
          Array.from({ length: LIMIT + 1 }, () =>
            fetch(`http://127.0.0.1:${app.port}/`).then((r) => r.status),
          ),
        );
        expect(after.sort()).toEqual([429, ...Array(LIMIT).fill(500)]);
        expect(probe.ran).toBe(LIMIT);
      } finally {
        await app.close();
      }
    });
  });
});

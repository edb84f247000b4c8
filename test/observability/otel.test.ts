import { RedisStore } from '@sluice/core';
import { instrument } from '@sluice/core/otel';
import { rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import { Redis } from 'ioredis';
import request from 'supertest';
import { expressVersions } from '../../packages/express/test/support.js';
import { frameworks } from '../../packages/fastify/test/frameworks.js';
import { describeRedis, type RedisProcess, startRedis } from '../support/redis.js';
import { testMeters, total } from './metrics.js';

/**
 * `instrument()` against real Express and Fastify apps on a real redis-server, read with the SDK's
 * metric reader: decisions by limiter, policy and outcome; store latency; and through a Redis kill,
 * store errors, degraded decisions and the open circuit, which close again once Redis is back. No
 * attribute holds a subject or an address.
 */
jest.setTimeout(60_000);

type Ask = () => Promise<number>;

async function expressApp(store: RedisStore, prefix: string): Promise<Ask> {
  const app = expressVersions[0]![1]();
  // No deny cache: every request after the kill must reach for the store (and fail). A timeout of 5 s:
  // shorter, a loaded machine decided some calls in process before the kill (with the client's offline
  // queue off, calls after it fail at once: the timeout does not slow them).
  const options = { store, prefix, storeTimeout: '5s', onStoreError: 'local', denyCacheMs: 0 } as const;
  app.use(rateLimiter({ ...options, name: 'api', limit: 3, window: '1m', subject: () => 'client-secret-7' }));
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  return async () => (await request(app).get('/')).status;
}

async function fastifyApp(store: RedisStore, prefix: string): Promise<Ask> {
  const app = frameworks[0]![1]();
  await app.register(sluice, {
    store,
    prefix,
    storeTimeout: '5s',
    denyCacheMs: 0,
    name: 'api',
    limit: 3,
    window: '1m',
    subject: () => 'client-secret-7',
  });
  app.get('/', async () => 'ok');
  return async () => (await app.inject({ url: '/' })).statusCode;
}

describeRedis('OpenTelemetry metrics from a real app', () => {
  let redis: RedisProcess;
  let client: Redis;
  let n = 0;
  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    client.on('error', () => {});
    await new Promise((resolve) => client.once('ready', resolve));
  });
  afterAll(async () => {
    client.disconnect();
    await redis.stop();
  });

  describe.each([
    ['Express', expressApp],
    ['Fastify', fastifyApp],
  ])('%s', (_name, make) => {
    it('counts decisions by outcome and times the store; a Redis kill shows up and goes away', async () => {
      const meters = testMeters();
      const stop = instrument({ meterProvider: meters.meterProvider });
      const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => {});
      try {
        if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
        const ask = await make(new RedisStore({ client }), `otel-${process.pid}-${n++}`);
        for (let i = 0; i < 5; i++) await ask();
        let m = await meters.read();
        expect(
          total(m.get('sluice.decisions'), { 'sluice.outcome': 'allowed', 'sluice.limiter': 'api' }),
        ).toBe(3);
        expect(
          total(m.get('sluice.decisions'), { 'sluice.outcome': 'denied', 'sluice.policy': '3-per-1m' }),
        ).toBe(2);
        expect(total(m.get('sluice.store.duration'))).toBeGreaterThanOrEqual(3);
        expect(total(m.get('sluice.store.errors'))).toBe(0);

        await redis.kill();
        for (let i = 0; i < 8; i++) await ask();
        m = await meters.read();
        expect(
          total(m.get('sluice.store.errors'), { 'sluice.limiter': 'api', 'sluice.store': 'redis' }),
        ).toBeGreaterThan(0);
        expect(total(m.get('sluice.decisions.degraded'), { 'sluice.limiter': 'api' })).toBeGreaterThan(0);
        expect(total(m.get('sluice.circuit.open'), { 'sluice.limiter': 'api' })).toBe(1);

        await redis.restart();
        await new Promise((resolve) => setTimeout(resolve, 300));
        const deadline = Date.now() + 10_000;
        while (total((await meters.read()).get('sluice.circuit.open')) !== 0 && Date.now() < deadline) {
          await ask();
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        m = await meters.read();
        expect(total(m.get('sluice.circuit.open'))).toBe(0);
        // One warning when the limiter lost its store, one when it was back; not one per request.
        const codes = warn.mock.calls.map(([, options]) => (options as { code?: string } | undefined)?.code);
        expect(codes).toEqual(['ERR_SLUICE_STORE_DEGRADED', 'ERR_SLUICE_STORE_RECOVERED']);
        // No attribute anywhere holds the subject.
        expect(JSON.stringify([...m.values()])).not.toContain('client-secret-7');
      } finally {
        warn.mockRestore();
        stop();
        await meters.shutdown();
      }
    });
  });
});

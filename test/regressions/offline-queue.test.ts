import { createLimiter, ErrorCodes, RedisStore } from '@sluice/core';
import { Redis } from 'ioredis';
import { describeRedis, type RedisProcess, startRedis } from '../support/redis.js';
import { recordWarnings } from '../support/warnings.js';

// new Redis(url, { enableOfflineQueue: false }), rate-limiter-flexible's usual setting, refuses calls
// until connected: the first calls after boot were decided by the local fallback, and nothing said so
// but the degraded warning of an outage (newcomer review, #28). Failed before the fix: no
// ERR_SLUICE_OFFLINE_QUEUE_OFF.

describeRedis('a RedisStore on an ioredis client without an offline queue', () => {
  let server: RedisProcess;
  const clients: Redis[] = [];
  const warnings = recordWarnings();
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await server.stop();
  });

  function client(): Redis {
    const made = new Redis(server.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    made.on('error', () => {});
    clients.push(made);
    return made;
  }

  test('called before it connected: decided without Redis, and warned of once, with the fix', async () => {
    const redis = client();
    const limiter = createLimiter({ limit: 5, window: '1m', store: new RedisStore({ client: redis }) });
    const first = await limiter.consume('boot');
    expect(first.degraded).toBe(true);
    await limiter.consume('boot');
    expect(warnings.codes.filter((c) => c === ErrorCodes.OFFLINE_QUEUE_OFF)).toHaveLength(1);
    expect(warnings.codes).toContain(ErrorCodes.STORE_DEGRADED);
    const message = warnings.messages[warnings.codes.indexOf(ErrorCodes.OFFLINE_QUEUE_OFF)]!;
    expect(message).toContain('enableOfflineQueue: false');
    expect(message).toContain('await client.connect()');
  });

  test('connected before the first call (as docs/deployment.md does): no warning', async () => {
    const redis = client();
    await redis.connect();
    const limiter = createLimiter({ limit: 5, window: '1m', store: new RedisStore({ client: redis }) });
    expect((await limiter.consume('ready')).degraded).toBeUndefined();
    expect(warnings.codes).toEqual([]);
  });
});

import { createLimiter, PostgresStore, RedisStore, type Store } from '@sluice/core';
import pg from 'pg';
import { ADAPTERS_AND_BACKENDS, closeClients, sharedClient } from '../../packages/core/test/redis/clients.js';
import { busy } from '../support/clock.js';
import { describePostgres, type ServerProcess, startPostgres } from '../support/postgres.js';
import { describeRedis } from '../support/redis.js';

/**
 * storeTimeout bounds the store, not the process: calls a healthy store answered in a millisecond,
 * while the event loop was busy (a burst being parsed, a cold start) for longer than storeTimeout,
 * are decided by the store. On 4f69c5b the overdue timer ran before the socket holding the answers
 * was read: every call degraded, and with 'local' a client got a fresh quota in process (the
 * newcomer review: 6 admitted against a limit of 3 with a healthy Redis).
 */
const BUSY_MS = 300;
const STORE_TIMEOUT_MS = 100;

async function throughBusyLoop(store: Store): Promise<{ allowed: number; degraded: number }> {
  // Named: the warm-up limiter and the measured one share the store on purpose (ERR_SLUICE_NAME_REUSE).
  const options = { name: 'lag', limit: 3, window: '1m', store, prefix: `lag-${Date.now()}` } as const;
  // Warm, with time to spare: the connection open, the script loaded, the table created.
  await createLimiter({ ...options, storeTimeout: '30s' }).peek('warm-up');
  const limiter = createLimiter({ ...options, storeTimeout: STORE_TIMEOUT_MS });
  let allowed = 0;
  let degraded = 0;
  for (let round = 0; round < 3; round++) {
    const calls = Array.from({ length: 4 }, () => limiter.consume('client'));
    busy(BUSY_MS);
    for (const decision of await Promise.all(calls)) {
      if (decision.allowed) allowed++;
      if (decision.degraded) degraded++;
    }
  }
  return { allowed, degraded };
}

describeRedis('a busy event loop is not a slow store: Redis', () => {
  afterAll(closeClients);

  // One client of each protocol adapter; @upstash/redis through a stand-in in a process of its own.
  test.each(ADAPTERS_AND_BACKENDS.filter(([, backend]) => backend === 'standalone').map(([name]) => name))(
    `%s: calls answered while the loop was busy for ${BUSY_MS} ms are the store's (storeTimeout ${STORE_TIMEOUT_MS} ms)`,
    async (name) => {
      const client = await sharedClient(name, 'standalone');
      expect(await throughBusyLoop(new RedisStore({ client }))).toEqual({ allowed: 3, degraded: 0 });
    },
  );
});

describePostgres('a busy event loop is not a slow store: PostgreSQL', () => {
  let server: ServerProcess;
  let pool: pg.Pool;
  beforeAll(async () => {
    server = await startPostgres();
    pool = new pg.Pool({ connectionString: server.url, max: 2 });
  }, 60_000);
  afterAll(async () => {
    await pool?.end();
    await server?.stop();
  });

  test(`calls answered while the loop was busy for ${BUSY_MS} ms are the store's (storeTimeout ${STORE_TIMEOUT_MS} ms)`, async () => {
    expect(await throughBusyLoop(new PostgresStore({ client: pool }))).toEqual({ allowed: 3, degraded: 0 });
  });
});

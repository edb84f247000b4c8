import { createLimiter, ErrorCodes, type RedisClient, RedisStore } from '@sluice/core';
import { Redis } from 'ioredis';
import * as nodeRedis4 from 'redis4';
import * as nodeRedis5 from 'redis5';
import * as nodeRedis6 from 'redis6';
import { describeRedis, freePort, type RedisProcess, startRedis } from '../support/redis.js';
import { recordWarnings } from '../support/warnings.js';

// new Redis(url, { enableOfflineQueue: false }), rate-limiter-flexible's usual setting, refuses calls
// until connected: the first calls after boot were decided by the local fallback, and nothing said so
// but the degraded warning of an outage (newcomer review, #28). Failed before 32bd0f8: no
// ERR_SLUICE_OFFLINE_QUEUE_OFF. node-redis's createClient({ disableOfflineQueue: true }) does the same
// while its connect() is under way; 680f359 said nothing of it (review 3 of #28).

/** A client without an offline queue, whose connection the test opens when it says. */
interface Unqueued {
  readonly client: RedisClient;
  /** Starts connecting; the promise settles once connected (or the first attempt failed). */
  connect(): Promise<unknown>;
  close(): void;
}

/** What the test uses of a node-redis module, the same in v4, v5 and v6. */
interface NodeRedisModule {
  createClient(options: { url: string; disableOfflineQueue: boolean }): {
    on(event: 'error', listener: () => void): unknown;
    connect(): Promise<unknown>;
    /** v5 and v6; v4 has only disconnect. */
    destroy?(): unknown;
    disconnect(): Promise<unknown>;
  };
}

const nodeRedis = (module: NodeRedisModule) => (url: string) => {
  const made = module.createClient({ url, disableOfflineQueue: true });
  made.on('error', () => {});
  return {
    client: made as unknown as RedisClient,
    connect: () => made.connect(),
    // Ended, not left to reconnect to a port nothing serves (a worker that cannot exit).
    close: () => (made.destroy === undefined ? void made.disconnect().catch(() => {}) : void made.destroy()),
  };
};

const CLIENTS: ReadonlyArray<readonly [string, (url: string) => Unqueued]> = [
  [
    'ioredis (enableOfflineQueue: false)',
    (url) => {
      // disconnectTimeout: ioredis's 2 s timer for a socket that never closes would outlive the file.
      const made = new Redis(url, {
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        disconnectTimeout: 10,
      });
      made.on('error', () => {});
      return { client: made, connect: () => made.connect(), close: () => made.disconnect() };
    },
  ],
  ['node-redis v4 (disableOfflineQueue: true)', nodeRedis(nodeRedis4 as unknown as NodeRedisModule)],
  ['node-redis v5 (disableOfflineQueue: true)', nodeRedis(nodeRedis5 as unknown as NodeRedisModule)],
  ['node-redis v6 (disableOfflineQueue: true)', nodeRedis(nodeRedis6 as unknown as NodeRedisModule)],
];

describeRedis('a RedisStore on a client without an offline queue', () => {
  let server: RedisProcess;
  const made: Unqueued[] = [];
  const warnings = recordWarnings();
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    for (const client of made) client.close();
    await server.stop();
  });

  describe.each(CLIENTS)('%s', (name, unqueued) => {
    function client(url = server.url): Unqueued {
      const one = unqueued(url);
      made.push(one);
      return one;
    }

    test('called while it connects: decided without Redis, and warned of once, with the fix', async () => {
      // An app that starts connecting and serves at once. The port has no server yet, so the client is
      // still connecting at every call, whatever the machine's speed (a real server could be ready first).
      const redis = client(`redis://127.0.0.1:${await freePort()}`);
      redis.connect().catch(() => {});
      const limiter = createLimiter({
        limit: 5,
        window: '1m',
        store: new RedisStore({ client: redis.client }),
      });
      const first = await limiter.consume('boot');
      expect(first.degraded).toBe(true);
      await limiter.consume('boot');
      expect(warnings.codes.filter((c) => c === ErrorCodes.OFFLINE_QUEUE_OFF)).toHaveLength(1);
      expect(warnings.codes).toContain(ErrorCodes.STORE_DEGRADED);
      const message = warnings.messages[warnings.codes.indexOf(ErrorCodes.OFFLINE_QUEUE_OFF)]!;
      expect(message).toMatch(/enableOfflineQueue: false|disableOfflineQueue: true/);
      // ioredis and iovalkey connect on their own unless made with lazyConnect, and then connect()
      // throws "Redis is already connecting/connected": the fix names both ways (newcomer review 28).
      if (name.startsWith('ioredis')) {
        expect(message).toContain('lazyConnect: true');
        expect(message).toContain("await once(client, 'ready')");
      } else {
        expect(message).toContain('await client.connect()');
        expect(message).not.toContain('lazyConnect');
      }
    });

    test('connected before the first call (as docs/deployment.md does): no warning', async () => {
      const redis = client();
      await redis.connect();
      const limiter = createLimiter({
        limit: 5,
        window: '1m',
        store: new RedisStore({ client: redis.client }),
        // A first answer slower than the default 250 ms (a loaded machine) would be degraded and warned of.
        storeTimeout: '30s',
      });
      expect((await limiter.consume('ready')).degraded).toBeUndefined();
      expect(warnings.codes).toEqual([]);
    });
  });
});

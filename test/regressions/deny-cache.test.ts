import {
  createLimiter,
  type Policy,
  RedisStore,
  type Store,
  type StoreCall,
  type StoreOutcome,
} from '@sluice/core';
import { manualClock } from '@sluice/core/testing';
import type { Cluster, Redis } from 'ioredis';
import {
  closeClients,
  clusterClient,
  standaloneClient,
  uniquePrefix,
} from '../../packages/core/test/redis/clients.js';
import { describeRedis, sharedCluster, sharedRedis } from '../support/redis.js';

// The deny cache answered what Redis would not (all failed on 13f5928):
// - a larger cost got a smaller cost's cached retryAfterMs (token bucket 10/10 s: cost 10 told 4999 ms,
//   truth 9998; cost 11, above capacity, told 4999 ms, truth Infinity);
// - a denial in flight when this limiter refunded was cached after the refund;
// - a reset made through another limiter object went unseen until the cached denial ran out.
describeRedis('the deny cache answers only what Redis would', () => {
  const clients = new Map<string, Redis | Cluster>();
  beforeAll(async () => {
    clients.set('standalone', standaloneClient(await sharedRedis()));
    clients.set('cluster', clusterClient(await sharedCluster()));
  });
  afterAll(closeClients);

  describe.each(['standalone', 'cluster'])('%s', (backend) => {
    const tokenBucket = [{ limit: 10, window: '10s', algorithm: 'token-bucket' as const }];
    const setup = (store?: (redis: RedisStore) => Store, policies: Policy[] = tokenBucket) => {
      const clock = manualClock();
      const redis = new RedisStore({ client: clients.get(backend)!, clock });
      // Named: another limiter object (the admin's) shares the counters on purpose (ERR_SLUICE_NAME_REUSE).
      const options = {
        name: 'api',
        policies,
        prefix: uniquePrefix('deny-cache'),
        storeTimeout: '10s',
        store: store === undefined ? redis : store(redis),
      };
      return { clock, options, limiter: createLimiter(options) };
    };

    test('a larger cost is never answered from a smaller cost denial', async () => {
      const { clock, limiter } = setup();
      expect((await limiter.consume('s', { cost: 10 })).allowed).toBe(true);
      clock.advance(5000);
      expect(await limiter.consume('s', { cost: 6 })).toMatchObject({ allowed: false, retryAfterMs: 1000 });
      expect(await limiter.consume('s', { cost: 10 })).toMatchObject({ allowed: false, retryAfterMs: 5000 });
      expect(await limiter.consume('s', { cost: 11 })).toMatchObject({
        allowed: false,
        retryAfterMs: Number.POSITIVE_INFINITY,
      });
    });

    test('a denial in flight when this limiter refunds is not cached', async () => {
      let hold: Promise<void> | undefined;
      const { limiter } = setup((redis) => ({
        local: false,
        clock: redis.clock,
        consume: async (call: StoreCall): Promise<StoreOutcome> => {
          const answer = await redis.consume(call);
          await hold;
          return answer;
        },
        refund: (call) => redis.refund(call),
        reset: (limiter, subject) => redis.reset(limiter, subject),
      }));
      const first = await limiter.consume('s', { cost: 10 });
      let open!: () => void;
      hold = new Promise((resolve) => {
        open = resolve;
      });
      const inFlight = limiter.consume('s', { cost: 10 });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await first.refund!();
      open();
      expect((await inFlight).allowed).toBe(false);
      hold = undefined;
      expect((await limiter.consume('s', { cost: 10 })).allowed).toBe(true);
    });

    test('a reset through another limiter object is seen within denyCacheMs (default 1 s)', async () => {
      const { clock, options, limiter } = setup(undefined, [
        { limit: 1, window: '1h', algorithm: 'fixed-window' },
      ]);
      const admin = createLimiter(options);
      await limiter.consume('s');
      expect(await limiter.consume('s')).toMatchObject({ allowed: false, retryAfterMs: expect.any(Number) });
      await admin.reset('s');
      clock.advance(1000);
      expect((await limiter.consume('s')).allowed).toBe(true);
    });
  });
});

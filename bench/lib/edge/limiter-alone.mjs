/**
 * The edge suite's floor (floor.mjs): the suite's two policies decided by a limiter on RedisStore over
 * @upstash/redis, with no HTTP layer (no headers, answers, lists, plans). Only bundled, never run.
 */
import { createLimiter, RedisStore } from '@sluice/core';

export function limiterAlone(redis) {
  const limiter = createLimiter({
    store: new RedisStore({ client: redis }),
    policies: [
      { name: 'second', algorithm: 'sliding-window', limit: 10, window: '1s' },
      { name: 'minute', algorithm: 'sliding-window', limit: 20, window: '1m' },
    ],
  });
  return (ip) => limiter.consume(ip);
}

/**
 * The edge suite's job done with Sluice: a fetch handler limited by two policies decided together on
 * Redis over HTTP (@upstash/redis), answering with its RateLimit fields and a 429 body. What the bundle
 * measures, and what the suite runs in process.
 */
import { RedisStore } from '@sluice/core';
import { rateLimiter } from '@sluice/fetch';

export function sluiceHandler(redis, { perSecond, perMinute }) {
  const limiter = rateLimiter({
    store: new RedisStore({ client: redis }),
    getIp: (request) => request.headers.get('cf-connecting-ip'),
    policies: [
      { name: 'second', algorithm: 'sliding-window', limit: perSecond, window: '1s' },
      { name: 'minute', algorithm: 'sliding-window', limit: perMinute, window: '1m' },
    ],
  });
  return limiter.wrap(() => new Response('ok'));
}

import { RedisStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import express from 'express';

/** Stand-in for your key store: API key -> the client it belongs to. Keys are secrets; client ids are not. */
export const apiKeys = new Map([
  ['key-ada', 'ada'],
  ['key-bob', 'bob'],
]);

/**
 * Two policies on every route, decided together in one Redis round trip: a burst allowance (token
 * bucket, 10 per second) and an hourly quota. A request denied by one is charged to neither.
 * Every process using the same Redis shares the counts: run two servers and they limit together.
 * Clients are known by API key (header x-api-key) or, without a known one, by IP: an unknown key
 * counts as none, so a client inventing a key per request still spends its IP's quota.
 *
 * @param {{ client: import('ioredis').Redis, prefix?: string, storeTimeout?: string }} options
 *   `storeTimeout`: Sluice's default (250 ms) unless given
 */
export function createApp({ client, prefix = 'sluice', storeTimeout }) {
  const app = express();
  app.use(
    rateLimiter({
      store: new RedisStore({ client }),
      storeTimeout,
      prefix,
      name: 'api',
      subject: ['api-key', 'ip'],
      // A known key becomes its client; an unknown one is null, which counts as no key: the IP decides.
      verify: (key) => apiKeys.get(key) ?? null,
      policies: [
        { name: 'burst', limit: 10, window: '1s', algorithm: 'token-bucket' },
        { name: 'hourly', limit: 1000, window: '1h' },
      ],
      // Redis down or slower than 250 ms: decide in this process until it is back (the default).
      onStoreError: 'local',
    }),
  );
  app.get('/', (req, res) => {
    res.json({ hello: 'world', binding: req.rateLimit?.policy, remaining: req.rateLimit?.remaining });
  });
  return app;
}

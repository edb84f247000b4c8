import { PostgresStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import express from 'express';

/**
 * Two policies on every route, decided together in one PostgreSQL round trip, on the database's
 * clock: a sliding window of 5 per minute and a token bucket of 100 per hour. A request denied by one
 * is charged to neither. Every process on the same database shares the counts; the store creates
 * its table (sluice_limits) on first use.
 *
 * @param {{ pool: import('pg').Pool, prefix?: string, storeTimeout?: string }} options
 *   `storeTimeout`: Sluice's default (250 ms) unless given
 */
export function createApp({ pool, prefix = 'sluice', storeTimeout }) {
  const app = express();
  app.use(
    rateLimiter({
      store: new PostgresStore({ client: pool }),
      storeTimeout,
      prefix,
      name: 'api',
      policies: [
        { name: 'minute', limit: 5, window: '1m', algorithm: 'sliding-window' },
        { name: 'hourly', limit: 100, window: '1h', algorithm: 'token-bucket' },
      ],
      // The database down or slower than storeTimeout: decide in this process until it is back.
      onStoreError: 'local',
    }),
  );
  app.get('/', (req, res) => {
    res.json({ hello: 'world', binding: req.rateLimit?.policy, remaining: req.rateLimit?.remaining });
  });
  return app;
}

import cluster from 'node:cluster';
import { rateLimiter } from '@sluice/express';
import express from 'express';

/**
 * One worker's app: 10 requests per minute per client IP, counted by the cluster's primary, so the
 * limit is 10 whichever worker serves a request (with a MemoryStore per worker it would be 10 per
 * worker, 40 in all).
 *
 * @param {{ store: import('@sluice/core').Store, limit?: number }} options
 */
export function createApp({ store, limit = 10 }) {
  const app = express();
  const worker = String(cluster.worker?.id ?? 0);
  // Which worker answered, refusals included: the limit is the same whichever it is.
  app.use((_req, res, next) => {
    res.set('x-worker', worker);
    next();
  });
  app.use(
    rateLimiter({
      store,
      limit,
      window: '1m',
      // The primary busy or gone for longer than 250 ms: decide in this worker until it answers again.
      onStoreError: 'local',
    }),
  );
  app.get('/', (req, res) => {
    res.json({ worker, remaining: req.rateLimit?.remaining });
  });
  return app;
}

import { rateLimiter } from '@sluice/express';
import express from 'express';

/**
 * GET /forward calls an upstream that takes at most 5 requests per second from us, all clients
 * together. A leaky bucket with delay (the default for leaky-bucket) holds each accepted request
 * until its slot, 200 ms apart, so a burst reaches the upstream as an even flow; the bucket holds 5,
 * and requests beyond that are refused with 429 rather than queued for long.
 * `store` is for tests (a MemoryStore on a still clock); the app itself keeps the default.
 *
 * @param {{ store?: import('@sluice/core').Store }} [options]
 */
export function createApp({ store } = {}) {
  const app = express();
  const upstreamLimit = rateLimiter({
    name: 'upstream',
    algorithm: 'leaky-bucket',
    limit: 5,
    window: '1s',
    burst: 5,
    scope: 'global',
    ...(store && { store }),
  });
  app.get('/forward', upstreamLimit, (req, res) => {
    // Here you would call the upstream; this answers when the request was let through.
    res.json({ forwardedAt: Date.now(), waitedMs: req.rateLimit?.delayMs ?? 0 });
  });
  return app;
}

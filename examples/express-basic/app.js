import { rateLimiter } from '@sluice/express';
import express from 'express';

/**
 * Every route: 100 requests per 15 minutes per client IP (sliding window, the default).
 * POST /login: 5 per minute on top, counted exactly (sliding log).
 * On the in-memory store: one process, nothing to set up.
 */
export function createApp() {
  const app = express();
  // Behind a proxy or load balancer, trust it by address (never a hop count, which a client that
  // connects directly defeats), so req.ip (the subject) is the client's address and not the proxy's:
  // app.set('trust proxy', 'loopback, linklocal, uniquelocal');

  app.use(rateLimiter({ limit: 100, window: '15m' }));

  app.get('/', (req, res) => {
    res.json({ hello: 'world', remaining: req.rateLimit?.remaining });
  });

  const loginLimit = rateLimiter({ name: 'login', limit: 5, window: '1m', algorithm: 'sliding-log' });
  app.post('/login', loginLimit, (_req, res) => {
    res.json({ welcome: true });
  });

  return app;
}

import { rateLimiter } from '@sluice/hono';
import { Hono } from 'hono';

/**
 * Every route: 100 requests per 15 minutes per client IP (sliding window, the default).
 * POST /login: 5 per minute on top, counted exactly (sliding log).
 * On the in-memory store: one process, nothing to set up. Served by @hono/node-server (server.js),
 * whose connection address is the client IP.
 */
export function createApp() {
  const app = new Hono();
  // Behind a proxy or load balancer, the connection comes from the proxy: read the address it
  // appended instead, with getIp: (c) => c.req.header('x-forwarded-for')?.split(',').at(-1)?.trim()

  app.use(rateLimiter({ limit: 100, window: '15m' }));

  app.get('/', (c) => c.json({ hello: 'world', remaining: c.get('rateLimit')?.remaining }));

  const loginLimit = rateLimiter({ name: 'login', limit: 5, window: '1m', algorithm: 'sliding-log' });
  app.post('/login', loginLimit, (c) => c.json({ welcome: true }));

  return app;
}

import { rateLimiter } from '@sluice/koa';
import Koa from 'koa';

/**
 * Every route: 100 requests per 15 minutes per client IP (sliding window, the default).
 * POST /login: 5 per minute on top, counted exactly (sliding log).
 * On the in-memory store: one process, nothing to set up.
 */
export function createApp() {
  const app = new Koa();
  // Behind a proxy or load balancer on your private network, pass getIp: privateProxyIp (from
  // @sluice/koa) to each limiter; leave app.proxy off: a client that connects directly defeats it.

  app.use(rateLimiter({ limit: 100, window: '15m' }));

  const loginLimit = rateLimiter({ name: 'login', limit: 5, window: '1m', algorithm: 'sliding-log' });
  app.use(async (ctx, next) => {
    if (ctx.method === 'POST' && ctx.path === '/login') {
      // The login limit runs on this route only (a router's route would take it the same way).
      return loginLimit(ctx, async () => {
        ctx.body = { welcome: true };
      });
    }
    return next();
  });

  app.use((ctx) => {
    ctx.body = { hello: 'world', remaining: ctx.state.rateLimit?.remaining };
  });

  return app;
}

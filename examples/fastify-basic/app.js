import sluice from '@sluice/fastify';
import Fastify from 'fastify';

/**
 * Every route: 100 requests per minute per client IP. GET /search has its own limit instead,
 * 3 per 10 seconds, counted on its own. On the in-memory store: one process, nothing to set up.
 */
export async function buildApp() {
  // Behind a proxy or load balancer: Fastify({ trustProxy: 1 }), so request.ip is the client's address.
  const app = Fastify();
  await app.register(sluice, { limit: 100, window: '1m' });

  app.get('/', async (request) => ({ hello: 'world', remaining: request.rateLimit?.remaining }));

  app.get('/search', { config: { rateLimit: { limit: 3, window: '10s' } } }, async (request) => ({
    results: [],
    remaining: request.rateLimit?.remaining,
  }));

  return app;
}

import { RedisStore } from '@sluice/core';
import sluice from '@sluice/fastify';
import Fastify from 'fastify';

/**
 * On Redis, shared by every process on the same Redis:
 * - every route: 100 per minute per client (the global limit);
 * - GET /search: its own limit instead, 5 per 10 seconds, a token bucket;
 * - GET /health: not limited at all.
 * Routes inherit the store and everything else they do not set from the plugin's options.
 *
 * @param {{ client: import('ioredis').Redis, prefix?: string }} options
 */
export async function buildApp({ client, prefix = 'sluice' }) {
  const app = Fastify();
  await app.register(sluice, {
    store: new RedisStore({ client }),
    prefix,
    subject: ['api-key', 'ip'],
    limit: 100,
    window: '1m',
  });

  app.get('/', async (request) => ({ hello: 'world', remaining: request.rateLimit?.remaining }));

  app.get(
    '/search',
    { config: { rateLimit: { limit: 5, window: '10s', algorithm: 'token-bucket' } } },
    async (request) => ({ results: [], remaining: request.rateLimit?.remaining }),
  );

  app.get('/health', { config: { rateLimit: false } }, async () => ({ ok: true }));

  return app;
}

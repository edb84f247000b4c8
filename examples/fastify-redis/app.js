import { RedisStore } from '@sluice/core';
import sluice from '@sluice/fastify';
import Fastify from 'fastify';

/** Stand-in for your key store: API key -> the client it belongs to. Keys are secrets; client ids are not. */
export const apiKeys = new Map([
  ['key-ada', 'ada'],
  ['key-bob', 'bob'],
]);

/**
 * On Redis, shared by every process on the same Redis:
 * - every route: 100 per minute per client (the global limit), a client being its API key's owner, or
 *   its IP without a known key (an unknown key counts as none: inventing keys buys no quota);
 * - GET /search: its own limit instead, 5 per 10 seconds, a token bucket;
 * - GET /health: not limited at all.
 * Routes inherit the store and everything else they do not set from the plugin's options.
 *
 * @param {{ client: import('ioredis').Redis, prefix?: string, storeTimeout?: string }} options
 *   `storeTimeout`: Sluice's default (250 ms) unless given
 */
export async function buildApp({ client, prefix = 'sluice', storeTimeout }) {
  const app = Fastify();
  await app.register(sluice, {
    store: new RedisStore({ client }),
    storeTimeout,
    prefix,
    subject: ['api-key', 'ip'],
    // A known key becomes its client; an unknown one is null, which counts as no key: the IP decides.
    verify: (key) => apiKeys.get(key) ?? null,
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

import { RedisStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import express from 'express';

/** Stand-in for your key store: API key -> the client it belongs to. Keys are secrets; client ids are not. */
export const apiKeys = new Map([
  ['key-ada', 'ada'],
  ['key-bob', 'bob'],
]);

/**
 * On a Redis Cluster.
 * - /api: 20 per 10 seconds per client. Each subject's keys carry the subject's hash tag, so clients
 *   spread over the cluster's slots and nodes.
 * - POST /checkout: 3 per minute per client and 50 per second for the whole site, decided together.
 *   The global policy pins this limiter's keys to one slot (the limiter's hash tag), so every
 *   checkout goes to one node: fine for one endpoint, a hot slot if every route had a global policy.
 * A client is known by its API key, or by its IP without a known key: an unknown key counts as none,
 * so a client inventing a key per request is still one client to both limits.
 *
 * @param {{ client: import('ioredis').Cluster, prefix?: string, keys?: Map<string, string>, storeTimeout?: string }} options
 *   `keys`: API key -> client (default `apiKeys`); `storeTimeout`: Sluice's default (250 ms) unless given
 */
export function createApp({ client, prefix = 'sluice', keys = apiKeys, storeTimeout }) {
  const store = new RedisStore({ client });
  const app = express();
  // A known key becomes its client; an unknown one is null, which counts as no key: the IP decides.
  /** @param {string} key */
  const verify = (key) => keys.get(key) ?? null;

  app.use(
    '/api',
    rateLimiter({
      store,
      prefix,
      storeTimeout,
      name: 'api',
      subject: ['api-key', 'ip'],
      verify,
      limit: 20,
      window: '10s',
    }),
  );
  app.get('/api/things', (req, res) => {
    res.json({ things: [], remaining: req.rateLimit?.remaining });
  });

  const checkoutLimit = rateLimiter({
    store,
    prefix,
    name: 'checkout',
    subject: ['api-key', 'ip'],
    verify,
    policies: [
      { name: 'per-client', limit: 3, window: '1m' },
      { name: 'site-wide', limit: 50, window: '1s', scope: 'global' },
    ],
  });
  app.post('/checkout', checkoutLimit, (req, res) => {
    res.json({ ordered: true, binding: req.rateLimit?.policy });
  });
  return app;
}

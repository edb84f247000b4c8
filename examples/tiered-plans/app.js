import { rateLimiter } from '@sluice/express';
import express from 'express';

/**
 * Each plan: a burst policy and an hourly quota, decided together.
 * @type {Record<string, { policies: import('@sluice/core').Policy[] }>}
 */
export const plans = {
  free: {
    policies: [
      { name: 'burst', limit: 5, window: '10s', algorithm: 'token-bucket' },
      { name: 'hourly', limit: 100, window: '1h' },
    ],
  },
  pro: {
    policies: [
      { name: 'burst', limit: 50, window: '10s', algorithm: 'token-bucket', burst: 100 },
      { name: 'hourly', limit: 10_000, window: '1h' },
    ],
  },
};

/** Stand-in for your customer database: API key -> customer. Keys are secrets; ids are not. */
export const customers = new Map([
  ['free-key-123', { id: 'acme', plan: 'free' }],
  ['pro-key-456', { id: 'globex', plan: 'pro' }],
]);

/**
 * The plan a request is billed to: its key's customer's, or free for no key and unknown keys.
 * @param {import('express').Request} req
 */
function planOf(req) {
  return customers.get(req.get('x-api-key') ?? '')?.plan ?? 'free';
}

/**
 * API keys mapped to plans. `verify` turns a valid key into its customer id, so limits follow the
 * customer (and no key ever reaches a store key or a log); an unknown key counts as no key, so the
 * request is limited by IP on the free plan. Rotating made-up keys does not escape the IP's limit.
 */
export function createApp() {
  const app = express();
  app.use(
    rateLimiter({
      name: 'api',
      // Every plan checked now; `plan` picks one per request, one store round trip per decision.
      plans,
      plan: planOf,
      subject: ['api-key', 'ip'],
      verify: (key) => customers.get(key)?.id ?? null,
    }),
  );
  app.get('/v1/things', (req, res) => {
    res.json({ plan: planOf(req), things: [], remaining: req.rateLimit?.remaining });
  });
  return app;
}

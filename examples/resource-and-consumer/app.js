import sluice from '@sluice/fastify';
import Fastify from 'fastify';

/** Stand-in for your key store: API key -> consumer. Keys are secrets; consumer ids are not. */
export const consumers = new Map([
  ['key-a', 'consumer-a'],
  ['key-b', 'consumer-b'],
  ['key-c', 'consumer-c'],
]);

/**
 * POST /reports is expensive and shared: at most 3 per minute per consumer, and at most 5 per minute
 * for all consumers together (a global-scoped policy). Both are decided together: a consumer refused
 * by its own limit spends nothing of the shared one, and when the shared one runs out, everyone waits.
 * A consumer is known by its API key, or by its IP without a known key: an unknown key counts as none,
 * so a client inventing keys gets one consumer's 3, not the whole shared 5.
 * Only routes that ask for a limit are limited (global: false).
 */
export async function buildApp() {
  const app = Fastify();
  await app.register(sluice, {
    global: false,
    subject: ['api-key', 'ip'],
    // A known key becomes its consumer; an unknown one is null, which counts as no key: the IP decides.
    verify: (key) => consumers.get(key) ?? null,
  });

  app.post(
    '/reports',
    {
      config: {
        rateLimit: {
          name: 'reports',
          policies: [
            { name: 'per-consumer', limit: 3, window: '1m' },
            { name: 'all-consumers', limit: 5, window: '1m', scope: 'global' },
          ],
        },
      },
    },
    async (request) => ({ report: 'queued', binding: request.rateLimit?.policy }),
  );

  app.get('/', async () => ({ hello: 'world' }));
  return app;
}

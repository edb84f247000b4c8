import sluice from '@sluice/fastify';
import Fastify from 'fastify';

/**
 * POST /reports is expensive and shared: at most 3 per minute per consumer, and at most 5 per minute
 * for all consumers together (a global-scoped policy). Both are decided together: a consumer refused
 * by its own limit spends nothing of the shared one, and when the shared one runs out, everyone waits.
 * Only routes that ask for a limit are limited (global: false).
 */
export async function buildApp() {
  const app = Fastify();
  await app.register(sluice, { global: false, subject: ['api-key', 'ip'] });

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

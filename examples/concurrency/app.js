import { setTimeout as sleep } from 'node:timers/promises';
import sluice from '@sluice/fastify';
import Fastify from 'fastify';

/**
 * GET /export is slow: each API key (or IP, without one) may run at most 2 at a time. A slot frees
 * as soon as a response finishes or its client disconnects; a lease never given back (a crashed
 * process) expires after 5 minutes.
 *
 * @param {{ workMs?: number }} [options] how long an export takes
 */
export async function buildApp({ workMs = 2_000 } = {}) {
  const app = Fastify();
  await app.register(sluice, { global: false, subject: ['api-key', 'ip'] });

  app.get(
    '/export',
    { config: { rateLimit: { name: 'exports', algorithm: 'concurrency', limit: 2, window: '5m' } } },
    async (request) => {
      await sleep(workMs);
      return { exported: true, inFlightAfterThis: 2 - (request.rateLimit?.remaining ?? 0) };
    },
  );
  return app;
}

import { setTimeout as sleep } from 'node:timers/promises';
import sluice from '@sluice/fastify';
import Fastify from 'fastify';

/**
 * GET /export is slow: each API key (or IP, without one) may run at most 2 at a time. A slot frees
 * when the export ends its response; a client that disconnects keeps its slot until then (its export
 * still runs). A lease never given back (a crashed process) expires after 5 minutes, which is why a
 * refused request's Retry-After says 300: the only bound known when it is refused (a slot usually
 * frees much sooner, when an export finishes).
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

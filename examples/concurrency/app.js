import { setTimeout as sleep } from 'node:timers/promises';
import sluice from '@sluice/fastify';
import Fastify from 'fastify';

/** Stand-in for your key store: API key -> the client it belongs to. Keys are secrets; client ids are not. */
export const apiKeys = new Map([
  ['key-ada', 'ada'],
  ['key-bob', 'bob'],
]);

/**
 * GET /export is slow: each client may run at most 2 at a time, known by its API key, or by its IP
 * without a known key (an unknown key counts as none, so inventing keys buys no slots). A slot frees
 * when the export ends its response; a client that disconnects keeps its slot until then (its export
 * still runs). A lease never given back (a crashed process) expires after 5 minutes, which is why a
 * refused request's Retry-After says 300: the only bound known when it is refused (a slot usually
 * frees much sooner, when an export finishes).
 *
 * @param {{ workMs?: number }} [options] how long an export takes
 */
export async function buildApp({ workMs = 2_000 } = {}) {
  const app = Fastify();
  await app.register(sluice, {
    global: false,
    subject: ['api-key', 'ip'],
    // A known key becomes its client; an unknown one is null, which counts as no key: the IP decides.
    verify: (key) => apiKeys.get(key) ?? null,
  });

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

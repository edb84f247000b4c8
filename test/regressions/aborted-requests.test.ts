import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type RateLimiterOptions, rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import { expressVersions } from '../../packages/express/test/support.js';
import { frameworks } from '../../packages/fastify/test/frameworks.js';
import { hangUps, probe as newProbe, type Probe, work } from '../support/aborting-clients.js';

// With a concurrency limit of 2, 20 requests whose clients disconnected after 30 ms started 20
// handlers, all running at once (the lease was released on 'close'); with skipFailedRequests, aborted
// requests were refunded, so a client aborting every request ran the handler without limit. A lease
// now ends when the handler ends the response, and a client that leaves first gets no refund.
// Failed on 13f5928.

const WORK_MS = 300;

type Start = (options: RateLimiterOptions, probe: Probe) => Promise<{ port: number; close(): Promise<void> }>;

const onExpress: Start = async (options, probe) => {
  const app = expressVersions[0]![1]();
  app.use(rateLimiter(options));
  app.get('/', async (_req, res) => {
    await work(probe, WORK_MS);
    res.status(500).send('failed');
  });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};

const onFastify: Start = async (options, probe) => {
  const app = frameworks[0]![1]();
  await app.register(sluice, options as never);
  app.get('/', async (_request, reply) => {
    await work(probe, WORK_MS);
    return reply.code(500).send('failed');
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { port: (app.server.address() as AddressInfo).port, close: () => app.close() };
};

describe.each([
  ['Express', onExpress],
  ['Fastify', onFastify],
])('%s: clients that abort', (_name, start) => {
  it('never run more handlers at once than the concurrency limit', async () => {
    const probe = newProbe();
    const server = await start({ limit: 2, window: '1m', algorithm: 'concurrency' }, probe);
    try {
      // 20 clients, two at a time, each leaving after 30 ms while its handler works for 300 ms.
      for (let i = 0; i < 10; i++) await hangUps(server.port, 2, 30);
      await new Promise((resolve) => setTimeout(resolve, WORK_MS + 100));
      expect(probe.most).toBe(2);
      expect(probe.ran).toBeLessThanOrEqual(4);
      // Their handlers ended: the leases are back.
      await hangUps(server.port, 2, 30);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(probe.ran).toBeGreaterThan(2);
    } finally {
      await server.close();
    }
  });

  it('get no refund from skipFailedRequests, however the handler ends', async () => {
    const probe = newProbe();
    const options = { limit: 3, window: '1m', algorithm: 'fixed-window', skipFailedRequests: true } as const;
    const server = await start(options, probe);
    try {
      for (let i = 0; i < 3; i++) await hangUps(server.port, 3, 30);
      await new Promise((resolve) => setTimeout(resolve, WORK_MS + 100));
      expect(probe.ran).toBe(3);
    } finally {
      await server.close();
    }
  });
});

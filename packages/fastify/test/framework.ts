/** Fastify 5 and 4 for the shared adapter suite (test/adapters). */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Decision } from '@sluice/core';
import sluice from '@sluice/fastify';
import { control, type Framework, slow, view } from '../../../test/adapters/framework.js';
import { frameworks, type MakeApp as MakeFastify } from './frameworks.js';

function onFastify(name: string, make: MakeFastify): Framework {
  return {
    name,
    header: (req, h) => [(req as { headers: Record<string, unknown> }).headers[h]].flat()[0] as string,
    answer: (body) => (request: { rateLimit?: Decision }, reply: { send(b: unknown): void }, d: Decision) =>
      reply.send(body(d, request.rateLimit)),
    async start(options, settings = {}) {
      const { maxHeaderSize = 16384 } = settings;
      const app = make({
        // A hop count too: Fastify 5.12.1 and later neither apply nor type it (a warning says so).
        trustProxy: (settings.trustProxy ?? false) as boolean,
        serverFactory: (handler) => createServer({ maxHeaderSize }, handler),
      });
      const c = control();
      app.setErrorHandler((error: Error, _request, reply) => reply.code(500).send({ error: error.message }));
      const { timeoutMs } = settings;
      if (timeoutMs !== undefined)
        app.addHook('onRequest', (request, reply, done) => {
          if (slow(request.headers))
            setTimeout(() => reply.sent || reply.code(503).send('timeout'), timeoutMs);
          done();
        });
      const { beforeMs } = settings;
      if (beforeMs !== undefined)
        app.addHook('onRequest', (_request, _reply, done) => void setTimeout(done, beforeMs));
      await app.register(sluice, options);
      // A second registration: another global limit, after the first.
      if (settings.second !== undefined) await app.register(sluice, settings.second);
      app.get('/', async (request) => {
        c.reached.push(Date.now());
        return view(request.rateLimit);
      });
      for (const path of ['ok', 'fast']) app.get(`/${path}`, async () => path);
      app.get('/fail', async (_request, reply) => reply.code(500).send('no'));
      // The global limit's hook, for its reset(request) and subjectOf(request).
      const limiter = settings.resetOnLogin ? app.rateLimit() : undefined;
      app.post('/login', async (request, reply) => {
        if ((request.query as { pw?: string }).pw !== 'right') return reply.code(401).send('');
        if (limiter === undefined) return reply.send('');
        await limiter.reset(request);
        return { subject: await limiter.subjectOf(request) };
      });
      app.get('/slow', async () => c.gate.then(() => 'slow'));
      app.get('/hang', (_request, reply) => {
        c.held.push((status) => reply.code(status).send('late'));
      });
      app.get('/work', async (_request, reply) => {
        await c.work();
        return reply.code(500).send('failed');
      });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = app.server.address() as AddressInfo;
      return {
        url: `http://127.0.0.1:${port}`,
        port,
        control: c,
        close: async () => {
          app.server.closeAllConnections();
          await app.close();
        },
      };
    },
  };
}

export const fastifyFrameworks: Framework[] = frameworks.map(([name, make]) => onFastify(name, make));

/**
 * A server whose rate-limit decision can come back after the response was sent: requests with
 * `x-slow` get their subject 150 ms late, and a timeout answers them 503 after 50 ms meanwhile.
 * FRAMEWORK = express | fastify; limit 1 per minute, one subject for every request. Prints
 * `READY <port>`; an unhandled rejection ends the process (Node's default), as it would in production.
 */
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { rateLimiter } from '@sluice/express';
import { sluice } from '@sluice/fastify';

// The frameworks as the adapters' own packages install them.
const express = createRequire(new URL('../../../packages/express/package.json', import.meta.url))('express');
const Fastify = createRequire(new URL('../../../packages/fastify/package.json', import.meta.url))('fastify');

const options = {
  limit: 1,
  window: '1m',
  subject: async (req) => {
    if (req.headers['x-slow']) await sleep(150);
    return 'everyone';
  },
};

async function expressApp() {
  const app = express();
  app.use((req, res, next) => {
    if (req.headers['x-slow']) setTimeout(() => res.status(503).send('timeout'), 50);
    next();
  });
  app.use(rateLimiter(options));
  app.get('/', (_req, res) => {
    if (!res.headersSent) res.send('ok');
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return server.address().port;
}

async function fastifyApp() {
  const app = Fastify();
  app.addHook('onRequest', (request, reply, done) => {
    if (request.headers['x-slow']) setTimeout(() => reply.code(503).send('timeout'), 50);
    done();
  });
  await app.register(sluice, options);
  app.get('/', async (_request, reply) => (reply.sent ? undefined : 'ok'));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app.server.address().port;
}

const port = process.env.FRAMEWORK === 'fastify' ? await fastifyApp() : await expressApp();
console.log(`READY ${port}`);

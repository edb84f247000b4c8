/**
 * The HTTP breakdown's servers: a hello-world Express or Fastify app on /allowed with one part of
 * what a limiter adds to a request at a time (http-breakdown.mjs). Trust proxy is on, as in the
 * http suite.
 *   bare      nothing
 *   plugin    (Fastify) an empty plugin registered
 *   ip        that, and reads the client address as Sluice's 'ip' subject does (req.ip / request.ip)
 *   headers   that, and sets the headers Sluice sends (the ones of its first decision, fixed)
 *   sluice    the Sluice middleware or plugin on a MemoryStore
 */
import { createHttpHandler, frameworkReader, MemoryStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import express from 'express';
import Fastify from 'fastify';
import { announce, HELLO, ROUTES } from './limits.mjs';

const [framework, variant] = process.argv.slice(2);
const { limit, windowMs } = ROUTES.allowed;
// What Sluice sets on an allowed request of this route, taken from Sluice itself once.
const { headers: HEADERS } = createHttpHandler(
  { name: 'allowed', limit, window: windowMs },
  frameworkReader,
).handle({ ip: '10.0.0.1', headers: {} });
/** The address read last: the read is what is measured, and it goes somewhere. */
let _address;

if (framework === 'express') {
  const parts = {
    bare: [],
    ip: [
      (req, _res, next) => {
        _address = req.ip;
        next();
      },
    ],
    headers: [
      (req, res, next) => {
        _address = req.ip;
        for (const name in HEADERS) res.setHeader(name, HEADERS[name]);
        next();
      },
    ],
    sluice: [rateLimiter({ name: 'allowed', limit, window: windowMs, store: new MemoryStore() })],
  };
  const app = express();
  app.set('trust proxy', true);
  app.get('/allowed', ...parts[variant], (_req, res) => {
    res.send(HELLO);
  });
  const server = app.listen(0, '127.0.0.1', () => announce(server.address().port));
} else {
  const app = Fastify({ trustProxy: true, logger: false });
  const hooks = {
    ip: (request, _reply, done) => {
      _address = request.ip;
      done();
    },
    headers: (request, reply, done) => {
      _address = request.ip;
      reply.headers(HEADERS);
      done();
    },
  };
  let options = {};
  if (variant === 'sluice') {
    await app.register(sluice, { global: false });
    options = { config: { rateLimit: { name: 'allowed', limit, window: windowMs } } };
  } else if (variant !== 'bare') {
    app.register(async () => {});
    if (variant !== 'plugin') options = { onRequest: hooks[variant] };
  }
  app.get('/allowed', options, async () => HELLO);
  await app.listen({ port: 0, host: '127.0.0.1' });
  announce(app.server.address().port);
}

/**
 * The HTTP breakdown's apps: a hello-world Express or Fastify app on /allowed with one part of what a
 * limiter adds to a request at a time. Trust proxy is on, as in the http suite.
 *   bare           nothing
 *   plugin         (Fastify) an empty plugin registered
 *   ip             that, and reads the client address as Sluice's 'ip' subject does (req.ip / request.ip)
 *   headers        that, and sets the headers Sluice sends (those of a client's second request, fixed)
 *   sluice         the Sluice middleware or plugin on a MemoryStore
 *   denied-floor   reads the address and answers 429 with Sluice's headers and a problem+json body
 *                  made once: what any limiter that denies with these answers does at least
 *   sluice-denied  Sluice allowing one request an hour: every later one is answered 429
 * `buildApp` gives the app unstarted (http-inprocess.mjs drives it without a network); run as a
 * script with `<framework> <variant>`, it listens on a free port (http-breakdown.mjs).
 */
import { fileURLToPath } from 'node:url';
import { MemoryStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import express from 'express';
import Fastify from 'fastify';
import { answerOf, expressFloor, fastifyFloor } from './floors.mjs';
import { announce, HELLO, ROUTES } from './limits.mjs';

const ALLOWED = { name: 'allowed', limit: ROUTES.allowed.limit, window: ROUTES.allowed.windowMs };
const DENIED = { name: 'denied', limit: ROUTES.denied.limit, window: ROUTES.denied.windowMs };
// What Sluice answers on an allowed request of the route, and on a denied one.
const PASS = answerOf('allowed');
const DENIAL = answerOf('denied');

/** The address read last: the read is what is measured, and it goes somewhere. */
let _address;

function expressApp(variant) {
  const parts = {
    bare: [],
    ip: [
      (req, _res, next) => {
        _address = req.ip;
        next();
      },
    ],
    headers: [expressFloor(PASS)],
    'denied-floor': [expressFloor(DENIAL)],
    sluice: [rateLimiter({ ...ALLOWED, store: new MemoryStore() })],
    'sluice-denied': [rateLimiter({ ...DENIED, store: new MemoryStore() })],
  };
  const app = express();
  app.set('trust proxy', true);
  app.get('/allowed', ...parts[variant], (_req, res) => {
    res.send(HELLO);
  });
  return {
    handle: app,
    listen: () => {
      const server = app.listen(0, '127.0.0.1', () => announce(server.address().port));
    },
  };
}

async function fastifyApp(variant) {
  const app = Fastify({ trustProxy: true, logger: false });
  const hooks = {
    ip: (request, _reply, done) => {
      _address = request.ip;
      done();
    },
    headers: fastifyFloor(PASS),
    'denied-floor': fastifyFloor(DENIAL),
  };
  let options = {};
  if (variant === 'sluice' || variant === 'sluice-denied') {
    await app.register(sluice, { global: false });
    options = { config: { rateLimit: variant === 'sluice' ? ALLOWED : DENIED } };
  } else if (variant !== 'bare') {
    app.register(async () => {});
    if (variant !== 'plugin') options = { onRequest: hooks[variant] };
  }
  app.get('/allowed', options, async () => HELLO);
  await app.ready();
  return {
    handle: (req, res) => app.server.emit('request', req, res),
    listen: async () => {
      await app.listen({ port: 0, host: '127.0.0.1' });
      announce(app.server.address().port);
    },
  };
}

/** The app of `framework` and `variant`, ready and not listening: `handle(req, res)` serves a request. */
export function buildApp(framework, variant) {
  return framework === 'express' ? expressApp(variant) : fastifyApp(variant);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [framework, variant] = process.argv.slice(2);
  await (await buildApp(framework, variant)).listen();
}

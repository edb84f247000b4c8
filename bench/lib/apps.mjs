/**
 * The HTTP suite's apps: hello world on Express or Fastify, with two limited routes: /allowed never
 * reaches its limit, /denied allows one request per client an hour and answers every later one 429.
 * Trust proxy is on and the client address comes from X-Forwarded-For. Kinds:
 *   bare, control   nothing (Fastify: one empty plugin registered, as every real app has one)
 *   no-plugin       Fastify with no plugin at all (what its first plugin costs)
 *   floor           reads the address and gives every request Sluice's answer for its route, made
 *                   once, limiting nothing: no limiter answering as Sluice does can cost less
 *   sluice-memory, sluice-redis, and the peers: erl-* (express-rate-limit, rate-limit-redis on Redis),
 *   rlf-* (rate-limiter-flexible behind the few-line middleware of its README), frl-* (@fastify/rate-limit)
 * `buildApp` gives the app unstarted (the in-process measure drives `handle` without a network); run as
 * `node lib/apps.mjs <framework> <kind> [redisPort]` it listens on a free port and tells its parent.
 */
import { fileURLToPath } from 'node:url';
import fastifyRateLimit from '@fastify/rate-limit';
import {
  createHttpHandler,
  frameworkReader,
  MemoryStore,
  PROBLEM_CONTENT_TYPE,
  RedisStore,
} from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import Fastify from 'fastify';
import Redis from 'ioredis';
import { RedisStore as RateLimitRedisStore } from 'rate-limit-redis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { UNREACHED } from './common.mjs';

export const ROUTES = {
  allowed: { limit: UNREACHED, windowMs: 60_000 },
  denied: { limit: 1, windowMs: 3_600_000 },
};
const HELLO = 'hello world';

/** Sluice's answer on `route`, as the apps configure it, to a client's second request. */
function answerOf(route) {
  const { limit, windowMs } = ROUTES[route];
  const http = createHttpHandler({ name: route, limit, window: windowMs }, frameworkReader);
  const req = { ip: '10.0.0.1', headers: {} };
  http.handle(req);
  return http.handle(req);
}

/** The address read last: the read is what is measured, and it goes somewhere. */
let _address;

function expressFloor({ headers, pass, status, body }) {
  return (req, res, next) => {
    _address = req.ip;
    for (const name in headers) res.setHeader(name, headers[name]);
    if (pass) return next();
    res.statusCode = status;
    res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
    res.end(body);
  };
}

function fastifyFloor({ headers, pass, status, body }) {
  return (request, reply, done) => {
    _address = request.ip;
    reply.headers(headers);
    if (pass) return done();
    reply.code(status).type(PROBLEM_CONTENT_TYPE).send(body);
  };
}

/** rate-limiter-flexible has no Express middleware: the few lines its README shows. */
const flexible = (limiter) => (req, res, next) =>
  limiter.consume(req.ip).then(
    () => next(),
    (refusal) =>
      refusal instanceof RateLimiterRes ? res.status(429).send('Too Many Requests') : next(refusal),
  );

function expressApp(kind, client, routes) {
  const sluiceOn =
    (store) =>
    (route, { limit, windowMs }) => [rateLimiter({ name: route, limit, window: windowMs, store: store() })];
  const middleware =
    {
      floor: (route) => [expressFloor(answerOf(route))],
      'sluice-memory': sluiceOn(() => new MemoryStore()),
      'sluice-redis': sluiceOn(() => new RedisStore({ client })),
      'erl-memory': (_route, { limit, windowMs }) => [rateLimit({ limit, windowMs, validate: false })],
      'erl-redis': (route, { limit, windowMs }) => {
        const store = new RateLimitRedisStore({
          sendCommand: (...args) => client.call(...args),
          prefix: `erl-${route}:`,
        });
        return [rateLimit({ limit, windowMs, validate: false, store })];
      },
      'rlf-memory': (_route, { limit, windowMs }) => [
        flexible(new RateLimiterMemory({ points: limit, duration: windowMs / 1000 })),
      ],
      'rlf-redis': (route, { limit, windowMs }) => [
        flexible(
          new RateLimiterRedis({
            storeClient: client,
            points: limit,
            duration: windowMs / 1000,
            keyPrefix: `rlf-${route}`,
          }),
        ),
      ],
    }[kind] ?? (() => []);
  const app = express();
  app.set('trust proxy', true);
  for (const route of routes) {
    app.get(`/${route}`, ...middleware(route, ROUTES[route]), (_req, res) => {
      res.send(HELLO);
    });
  }
  return {
    handle: app,
    listen: () =>
      new Promise((resolve) => {
        const server = app.listen(0, '127.0.0.1', () => resolve(server.address().port));
      }),
  };
}

async function fastifyApp(kind, client, routes) {
  const app = Fastify({ trustProxy: true, logger: false });
  // Fastify serves every request slower once any plugin is registered, and a second costs nothing more:
  // the bare app registers an empty one, so that the limiters (plugins) are not charged for Fastify's first.
  if (kind !== 'no-plugin') app.register(async () => {});
  const sluiceConfig = (route, { limit, windowMs }) => ({
    config: { rateLimit: { name: route, limit, window: windowMs } },
  });
  const frlConfig = (_route, { limit, windowMs }) => ({
    config: { rateLimit: { max: limit, timeWindow: windowMs } },
  });
  const optionsOf =
    {
      floor: (route) => ({ onRequest: fastifyFloor(answerOf(route)) }),
      'sluice-memory': sluiceConfig,
      'sluice-redis': sluiceConfig,
      'frl-memory': frlConfig,
      'frl-redis': frlConfig,
    }[kind] ?? (() => ({}));
  if (kind === 'sluice-memory') await app.register(sluice, { global: false });
  if (kind === 'sluice-redis')
    await app.register(sluice, { global: false, store: new RedisStore({ client }) });
  if (kind === 'frl-memory') await app.register(fastifyRateLimit, { global: false });
  if (kind === 'frl-redis') await app.register(fastifyRateLimit, { global: false, redis: client });
  for (const route of routes) app.get(`/${route}`, optionsOf(route, ROUTES[route]), async () => HELLO);
  await app.ready();
  return {
    handle: (req, res) => app.server.emit('request', req, res),
    listen: async () => {
      await app.listen({ port: 0, host: '127.0.0.1' });
      return app.server.address().port;
    },
  };
}

/**
 * The app of `framework` and `kind`, ready, not listening: `handle(req, res)` serves a request. The
 * in-process measure builds only the route it measures (a second limiter in the process makes Sluice
 * read the decision a limiter before it left on the request).
 */
export function buildApp(framework, kind, redisPort, routes = Object.keys(ROUTES)) {
  const client = redisPort
    ? new Redis({ port: redisPort, host: '127.0.0.1', enableAutoPipelining: true })
    : undefined;
  return framework === 'express' ? expressApp(kind, client, routes) : fastifyApp(kind, client, routes);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [framework, kind, redisPort] = process.argv.slice(2);
  const port = await (await buildApp(framework, kind, redisPort && Number(redisPort))).listen();
  process.send({ port });
  // 'exit' ends the process normally (so that a CPU profile is written).
  process.on('message', (m) => m === 'exit' && process.exit(0));
  process.on('disconnect', () => process.exit(0));
}

/**
 * The HTTP suite's apps: hello world on Express, Fastify, Hono (@hono/node-server), Koa or NestJS
 * (on Express), with two limited routes: /allowed never
 * reaches its limit, /denied allows one request per client an hour and answers every later one 429.
 * Trust proxy is on and the client address comes from X-Forwarded-For. Kinds:
 *   bare, control   nothing (Fastify: one empty plugin registered, as every real app has one)
 *   no-plugin       Fastify with no plugin at all (what its first plugin costs)
 *   floor           reads the address and gives every request Sluice's answer for its route, made
 *                   once, limiting nothing: no limiter answering as Sluice does can cost less
 *   sluice-memory, sluice-redis, and the peers: erl-* (express-rate-limit, rate-limit-redis on Redis),
 *   rlf-* (rate-limiter-flexible behind the few-line middleware of its README), frl-* (@fastify/rate-limit),
 *   hrl-memory (hono-rate-limiter), krl-memory (koa-ratelimit), nt-memory (@nestjs/throttler)
 * `buildApp` gives the app unstarted (the in-process measure drives `handle` without a network); run as
 * `node lib/apps.mjs <framework> <kind> [redisPort]` it listens on a free port and tells its parent.
 * Each app imports its own framework and limiters only: a server process loads what it serves.
 */
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import {
  createHttpHandler,
  frameworkReader,
  MemoryStore,
  PROBLEM_CONTENT_TYPE,
  RedisStore,
} from '@sluice/core';
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
const flexible = (limiter, RateLimiterRes) => (req, res, next) =>
  limiter.consume(req.ip).then(
    () => next(),
    (refusal) =>
      refusal instanceof RateLimiterRes ? res.status(429).send('Too Many Requests') : next(refusal),
  );

async function expressApp(kind, client, routes) {
  const [{ default: express }, { rateLimit }, { rateLimiter }, { RedisStore: RateLimitRedisStore }, rlf] =
    await Promise.all([
      import('express'),
      import('express-rate-limit'),
      import('@sluice/express'),
      import('rate-limit-redis'),
      import('rate-limiter-flexible'),
    ]);
  const { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } = rlf;
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
        flexible(new RateLimiterMemory({ points: limit, duration: windowMs / 1000 }), RateLimiterRes),
      ],
      'rlf-redis': (route, { limit, windowMs }) => [
        flexible(
          new RateLimiterRedis({
            storeClient: client,
            points: limit,
            duration: windowMs / 1000,
            keyPrefix: `rlf-${route}`,
          }),
          RateLimiterRes,
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
  const [{ default: Fastify }, { default: sluice }, { default: fastifyRateLimit }] = await Promise.all([
    import('fastify'),
    import('@sluice/fastify'),
    import('@fastify/rate-limit'),
  ]);
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

/** An app served by Node's http server from its request listener. */
function nodeApp(listener) {
  return {
    handle: listener,
    listen: () =>
      new Promise((resolve) => {
        const server = createServer(listener).listen(0, '127.0.0.1', () => resolve(server.address().port));
      }),
  };
}

/** The client address as the load sends it (one X-Forwarded-For entry): Hono has no trust-proxy setting. */
const forwardedFor = (c) => c.req.header('x-forwarded-for') ?? '';

async function honoApp(kind, _client, routes) {
  const [{ Hono }, { getRequestListener }, { rateLimiter: honoLimiter }, { rateLimiter: honoRateLimiter }] =
    await Promise.all([
      import('hono'),
      import('@hono/node-server'),
      import('@sluice/hono'),
      import('hono-rate-limiter'),
    ]);
  const middleware =
    {
      'sluice-memory': (route, { limit, windowMs }) => [
        honoLimiter({ name: route, limit, window: windowMs, getIp: forwardedFor }),
      ],
      'hrl-memory': (_route, { limit, windowMs }) => [
        honoRateLimiter({ windowMs, limit, standardHeaders: 'draft-7', keyGenerator: forwardedFor }),
      ],
    }[kind] ?? (() => []);
  const app = new Hono();
  for (const route of routes) app.get(`/${route}`, ...middleware(route, ROUTES[route]), (c) => c.text(HELLO));
  return nodeApp(getRequestListener(app.fetch));
}

async function koaApp(kind, _client, routes) {
  const [{ default: Koa }, { rateLimiter: koaLimiter }, { default: koaRateLimit }] = await Promise.all([
    import('koa'),
    import('@sluice/koa'),
    import('koa-ratelimit'),
  ]);
  const app = new Koa();
  app.proxy = true;
  const limits = new Map(
    routes.map((route) => {
      const { limit, windowMs } = ROUTES[route];
      const made = {
        'sluice-memory': () => koaLimiter({ name: route, limit, window: windowMs }),
        'krl-memory': () =>
          koaRateLimit({
            driver: 'memory',
            db: new Map(),
            duration: windowMs,
            max: limit,
            id: (ctx) => ctx.ip,
          }),
      }[kind];
      return [`/${route}`, made?.()];
    }),
  );
  // A route each, as a router would: its limiter, then the handler.
  app.use(async (ctx, next) => {
    if (!limits.has(ctx.path)) return next();
    const limiter = limits.get(ctx.path);
    const handler = async () => {
      ctx.body = HELLO;
    };
    return limiter === undefined ? handler() : limiter(ctx, handler);
  });
  return nodeApp(app.callback());
}

/** `@decorator` on a method: each is called with the method's descriptor, the last one first. */
function decorate(target, method, ...decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(target.prototype, method);
  for (const decorator of decorators.reverse()) decorator(target.prototype, method, descriptor);
}

async function nestApp(kind, _client, routes) {
  await import('reflect-metadata');
  const [{ Controller, Get, Module }, { APP_GUARD, NestFactory }, throttler, nest] = await Promise.all([
    import('@nestjs/common'),
    import('@nestjs/core'),
    import('@nestjs/throttler'),
    import('@sluice/nestjs'),
  ]);
  const { Throttle, ThrottlerGuard, ThrottlerModule } = throttler;
  const { RateLimit, SluiceGuard, SluiceModule } = nest;
  class AppController {}
  for (const route of routes) {
    const { limit, windowMs } = ROUTES[route];
    // Named as the route: @nestjs/throttler keys its counters by the handler's name.
    AppController.prototype[route] = { [route]: () => HELLO }[route];
    const limited = {
      'sluice-memory': [RateLimit({ name: route, limit, window: windowMs })],
      'nt-memory': [Throttle({ default: { limit, ttl: windowMs } })],
    }[kind];
    decorate(AppController, route, ...(limited ?? []), Get(`/${route}`));
  }
  Controller()(AppController);
  const guarded = {
    'sluice-memory': {
      imports: [SluiceModule.forRoot({ limit: UNREACHED, window: 60_000 })],
      guard: SluiceGuard,
    },
    'nt-memory': {
      imports: [ThrottlerModule.forRoot([{ ttl: 60_000, limit: UNREACHED }])],
      guard: ThrottlerGuard,
    },
  }[kind];
  class AppModule {}
  Module({
    imports: guarded?.imports ?? [],
    controllers: [AppController],
    providers: guarded ? [{ provide: APP_GUARD, useClass: guarded.guard }] : [],
  })(AppModule);
  const app = await NestFactory.create(AppModule, { logger: false });
  app.set('trust proxy', true);
  await app.init();
  return nodeApp(app.getHttpAdapter().getInstance());
}

/**
 * The app of `framework` and `kind`, ready, not listening: `handle(req, res)` serves a request. The
 * in-process measure builds only the route it measures (a second limiter in the process makes Sluice
 * read the decision a limiter before it left on the request).
 */
export async function buildApp(framework, kind, redisPort, routes = Object.keys(ROUTES)) {
  const client = redisPort
    ? new (await import('ioredis')).default({
        port: redisPort,
        host: '127.0.0.1',
        enableAutoPipelining: true,
      })
    : undefined;
  const apps = { express: expressApp, fastify: fastifyApp, hono: honoApp, koa: koaApp, nestjs: nestApp };
  return apps[framework](kind, client, routes);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [framework, kind, redisPort] = process.argv.slice(2);
  const port = await (await buildApp(framework, kind, redisPort && Number(redisPort))).listen();
  process.send({ port });
  // 'exit' ends the process normally (so that a CPU profile is written).
  process.on('message', (m) => m === 'exit' && process.exit(0));
  process.on('disconnect', () => process.exit(0));
}

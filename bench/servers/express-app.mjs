/** A hello-world Express app, bare or behind one of the limiters; started by the http suite. */
import { RedisStore, MemoryStore as SluiceMemoryStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import Redis from 'ioredis';
import { RedisStore as RateLimitRedisStore } from 'rate-limit-redis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { answerOf, expressFloor } from './floors.mjs';
import { announce, HELLO, ROUTES, serverArgs } from './limits.mjs';

const { kind, redisPort } = serverArgs();
const client = redisPort
  ? new Redis({ port: redisPort, host: '127.0.0.1', enableAutoPipelining: true })
  : undefined;

/** rate-limiter-flexible has no Express middleware: the few lines its README shows. */
function flexible(limiter) {
  return (req, res, next) =>
    limiter.consume(req.ip).then(
      () => next(),
      (refusal) => {
        if (!(refusal instanceof RateLimiterRes)) return next(refusal);
        res.status(429).send('Too Many Requests');
      },
    );
}

/** The middleware of one route under `kind`, or none for the bare app. */
const middlewareFor = {
  bare: () => [],
  floor: (route) => [expressFloor(answerOf(route))],
  'sluice-memory': (route, { limit, windowMs }) => [
    rateLimiter({ name: route, limit, window: windowMs, store: new SluiceMemoryStore() }),
  ],
  'sluice-redis': (route, { limit, windowMs }) => [
    rateLimiter({ name: route, limit, window: windowMs, store: new RedisStore({ client }) }),
  ],
  'erl-memory': (_route, { limit, windowMs }) => [rateLimit({ limit, windowMs, validate: false })],
  'erl-redis': (route, { limit, windowMs }) => [
    rateLimit({
      limit,
      windowMs,
      validate: false,
      store: new RateLimitRedisStore({
        sendCommand: (...args) => client.call(...args),
        prefix: `erl-${route}:`,
      }),
    }),
  ],
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
};

const app = express();
app.set('trust proxy', true);
for (const [route, limits] of Object.entries(ROUTES)) {
  app.get(`/${route}`, ...middlewareFor[kind](route, limits), (_req, res) => {
    res.send(HELLO);
  });
}
const server = app.listen(0, '127.0.0.1', () => announce(server.address().port));

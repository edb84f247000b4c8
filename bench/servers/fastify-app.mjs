/** A hello-world Fastify app, bare or behind one of the limiters; started by the http suite. */
import fastifyRateLimit from '@fastify/rate-limit';
import { RedisStore } from '@sluice/core';
import sluice from '@sluice/fastify';
import Fastify from 'fastify';
import Redis from 'ioredis';
import { answerOf, fastifyFloor } from './floors.mjs';
import { announce, HELLO, ROUTES, serverArgs } from './limits.mjs';

const { kind, redisPort } = serverArgs();
const client = redisPort
  ? new Redis({ port: redisPort, host: '127.0.0.1', enableAutoPipelining: true })
  : undefined;

const app = Fastify({ trustProxy: true, logger: false });
// Fastify serves every request about 15% slower once any plugin is registered (one empty plugin costs
// that; a second costs nothing more: node bench/http-breakdown.mjs fastify). Every real app registers
// plugins and both limiters here are plugins, so the bare app registers an empty one: the ratios then
// measure the limiters, not Fastify's first plugin.
app.register(async () => {});

/** Sluice's route config: the route's limit, per route. */
const sluiceConfig = (route, { limit, windowMs }) => ({
  config: { rateLimit: { name: route, limit, window: windowMs } },
});
/** @fastify/rate-limit's route config. */
const frlConfig = (_route, { limit, windowMs }) => ({
  config: { rateLimit: { max: limit, timeWindow: windowMs } },
});

/** Registers the plugin of `kind` (limiting only routes that ask) and returns each route's options. */
const pluginFor = {
  bare: async () => () => ({}),
  floor: async () => (route) => ({ onRequest: fastifyFloor(answerOf(route)) }),
  'sluice-memory': async () => {
    await app.register(sluice, { global: false });
    return sluiceConfig;
  },
  'sluice-redis': async () => {
    await app.register(sluice, { global: false, store: new RedisStore({ client }) });
    return sluiceConfig;
  },
  'frl-memory': async () => {
    await app.register(fastifyRateLimit, { global: false });
    return frlConfig;
  },
  'frl-redis': async () => {
    await app.register(fastifyRateLimit, { global: false, redis: client });
    return frlConfig;
  },
};

const optionsOf = await pluginFor[kind]();
for (const [route, limits] of Object.entries(ROUTES)) {
  app.get(`/${route}`, optionsOf(route, limits), async () => HELLO);
}
await app.listen({ port: 0, host: '127.0.0.1' });
announce(app.server.address().port);

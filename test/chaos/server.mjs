/**
 * One app server of the chaos suite, in its own process (started by servers.ts through
 * register.mjs): Express or Fastify with a Redis-backed limiter in one `onStoreError` mode.
 *
 * Environment: FRAMEWORK (express | fastify), MODE (local | allow | deny), STORE_TIMEOUT_MS, LIMIT,
 * PREFIX, CLIENT (ioredis | iovalkey | node-redis v4 | node-redis v5), and REDIS_URL or REDIS_CLUSTER
 * ("host:port,..."). The subject is the `x-subject` header.
 * `GET /` answers `{ status, allowed, degraded }` for passed and denied requests alike (a `handler`
 * keeps the contract's status and headers and reports the decision). `GET /__stats` (not limited)
 * answers what this process saw: requests, the slowest answer, answers slower than storeTimeout +
 * 100 ms once stalls of the process that were not its own work are taken out (and how many
 * were slow only by such stalls), and
 * unhandled rejections.
 * Prints `READY <port>` once listening.
 */

import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { RedisStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import { sluice } from '@sluice/fastify';

const env = process.env;
const stats = { requests: 0, maxMs: 0, slow: [], stalled: 0, unhandled: [] };
const SLOW_MS = Number(env.STORE_TIMEOUT_MS) + 100;

/**
 * Stalls of this process that were not its own doing, as [end, length] in ms: a tick every 10 ms
 * notes how late it ran, less the CPU time the process spent meanwhile (its own work, Sluice's
 * included, is never excused). A response slow only because the process was not scheduled (a
 * loaded machine) is told apart from one that Sluice made slow by taking these out.
 */
const stalls = [];
let lastTick = performance.now();
let lastCpu = process.cpuUsage();
setInterval(() => {
  const now = performance.now();
  const cpu = process.cpuUsage(lastCpu);
  const starved = now - lastTick - 10 - (cpu.user + cpu.system) / 1000;
  if (starved > 2) stalls.push([now, starved]);
  if (stalls.length > 10_000) stalls.splice(0, 5_000);
  lastTick = now;
  lastCpu = process.cpuUsage();
}, 10).unref();

function stalledBetween(from, to) {
  let total = 0;
  for (const [end, length] of stalls) total += Math.max(0, Math.min(end, to) - Math.max(end - length, from));
  return total;
}

process.on('unhandledRejection', (reason) => {
  stats.unhandled.push(String(reason?.stack ?? reason).slice(0, 500));
});

/** Reconnects every 100 ms, as a service that must come back quickly would configure it. */
const retry = () => 100;
const nodes = env.REDIS_CLUSTER?.split(',').map((node) => {
  const at = node.lastIndexOf(':');
  return { host: node.slice(0, at), port: Number(node.slice(at + 1)) };
});

/** The client CLIENT names (ioredis, iovalkey, node-redis v4 or v5), connected. */
async function connect(name) {
  if (name === 'ioredis' || name === 'iovalkey') {
    const { Cluster, Redis } = name === 'ioredis' ? await import('ioredis') : await import('iovalkey');
    const client = nodes
      ? new Cluster(nodes, {
          clusterRetryStrategy: retry,
          redisOptions: { maxRetriesPerRequest: 1, retryStrategy: retry },
        })
      : new Redis(env.REDIS_URL, { maxRetriesPerRequest: 1, retryStrategy: retry });
    // Connection errors are the store's to handle; a listener keeps the client from printing each one.
    client.on('error', () => {});
    return client;
  }
  const { createClient, createCluster } = await import(name === 'node-redis v4' ? 'redis4' : 'redis5');
  const socket = { reconnectStrategy: retry };
  const client = nodes
    ? createCluster({
        rootNodes: nodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
        defaults: { socket },
      })
    : createClient({ url: env.REDIS_URL, socket });
  client.on('error', () => {});
  await client.connect();
  return client;
}
const client = await connect(env.CLIENT ?? 'ioredis');

const options = {
  limit: Number(env.LIMIT),
  // Long beside a test: a sliding window's previous count fades as its window slides, and a burst of
  // LIMIT + 1 that a loaded machine spread over seconds across a 30 s window's boundary was rightly
  // admitted whole (CI on 3a9dfa8, both 'local' servers of the cluster test, 21 of 21).
  window: '1h',
  store: new RedisStore({ client }),
  prefix: env.PREFIX,
  onStoreError: env.MODE,
  storeTimeout: Number(env.STORE_TIMEOUT_MS),
  subject: (req) => req.headers['x-subject'],
};

/** Time from the request reaching the app to its response finishing, less the stalls in between. */
function timed(startedAt) {
  const now = performance.now();
  const ms = now - startedAt;
  stats.requests++;
  stats.maxMs = Math.max(stats.maxMs, ms);
  if (ms <= SLOW_MS) return;
  // The tick that ends a stall may come after the response: look a tick past it.
  setTimeout(() => {
    const own = ms - stalledBetween(startedAt, now);
    if (own <= SLOW_MS) stats.stalled++;
    else if (stats.slow.length < 20)
      stats.slow.push(`${Math.round(ms)} ms (${Math.round(own)} ms not stalled)`);
  }, 15);
}

const report = (decision, status) => ({
  status,
  allowed: decision?.allowed,
  degraded: decision?.degraded === true,
});

async function expressApp() {
  const express = createRequire(new URL('../../packages/express/package.json', import.meta.url))('express');
  const app = express();
  app.get('/__stats', (_req, res) => res.json(stats));
  app.use((_req, res, next) => {
    const startedAt = performance.now();
    res.on('finish', () => timed(startedAt));
    next();
  });
  app.use(
    rateLimiter({
      ...options,
      handler: (_req, res, decision) => res.json(report(decision, res.statusCode)),
    }),
  );
  app.get('/', (req, res) => res.json(report(req.rateLimit, 200)));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return server.address().port;
}

async function fastifyApp() {
  const fastify = createRequire(new URL('../../packages/fastify/package.json', import.meta.url))('fastify');
  const app = fastify();
  app.addHook('onRequest', async (request) => {
    request.startedAt = performance.now();
  });
  app.addHook('onResponse', async (request) => {
    if (request.startedAt !== undefined) timed(request.startedAt);
  });
  await app.register(sluice, {
    ...options,
    handler: (_request, reply, decision) => reply.send(report(decision, reply.statusCode)),
  });
  app.get('/__stats', { config: { rateLimit: false } }, async () => stats);
  app.get('/', async (request) => report(request.rateLimit, 200));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return app.server.address().port;
}

const port = env.FRAMEWORK === 'fastify' ? await fastifyApp() : await expressApp();
console.log(`READY ${port}`);
process.on('SIGTERM', () => {
  client.disconnect();
  process.exit(0);
});

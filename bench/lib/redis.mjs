/**
 * A redis-server of the suite's own, the three clients RedisStore accepts, and Sluice and the peers
 * on a client, each reduced to `call(subject)` (resolves to whether the call was admitted) and, for
 * the peers, `count(subject)` (what the subject has used, as the library counts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import * as core from '@sluice/core';
import Redis from 'ioredis';
import { RedisStore as RateLimitRedisStore } from 'rate-limit-redis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { freePort } from '../../scripts/free-port.mjs';
import { storeCalls } from './common.mjs';

const require = createRequire(import.meta.url);
// Not in the package's exports (it has none): the store the plugin uses when given `redis`.
const FastifyRedisStore = require('@fastify/rate-limit/store/RedisStore.js');

/** A redis-server on a free loopback port, no persistence; `admin` is an ioredis client for INFO. */
export async function startRedis() {
  if (spawnSync('redis-server', ['--version']).error !== undefined) {
    throw new Error(
      'redis-server is not installed; this suite needs it (Debian: apt-get install -y redis-server)',
    );
  }
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', `${port}`, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.once('exit', () => child.kill());
  const admin = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
  admin.on('error', () => {});
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.connect();
      break;
    } catch (error) {
      if (attempt > 200 || child.exitCode !== null) {
        child.kill();
        throw new Error(`redis-server did not start on port ${port}: ${error.message}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const version = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1] ?? 'unknown';
  return {
    port,
    version,
    admin,
    async stop() {
      admin.disconnect();
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Redis CPU seconds (user + sys) and used memory, from INFO. */
export async function redisUsage(admin) {
  const info = (await admin.info('cpu')) + (await admin.info('memory'));
  const read = (field) => Number(new RegExp(`${field}:([\\d.]+)`).exec(info)?.[1] ?? Number.NaN);
  return { cpuSeconds: read('used_cpu_sys') + read('used_cpu_user'), usedMemory: read('used_memory') };
}

export const CLIENTS = ['ioredis', 'node-redis', 'iovalkey'];

/** A connected client of `name`: ioredis and iovalkey with auto-pipelining (node-redis always pipelines a turn). */
export async function connect(name, port) {
  if (name === 'node-redis') {
    const { createClient } = await import('redis');
    const client = createClient({ url: `redis://127.0.0.1:${port}` });
    client.on('error', () => {});
    await client.connect();
    return Object.assign(client, { end: () => client.destroy() });
  }
  const Client = name === 'iovalkey' ? (await import('iovalkey')).default : Redis;
  const client = new Client({ port, host: '127.0.0.1', enableAutoPipelining: true });
  await new Promise((resolve) => client.once('ready', resolve));
  return Object.assign(client, { end: () => client.disconnect() });
}

/** Sends a raw command on any of the three clients (rate-limit-redis's `sendCommand`). */
const sender = (client) =>
  typeof client.sendCommand === 'function' && typeof client.evalSha === 'function'
    ? (...args) => client.sendCommand(args)
    : (...args) => client.call(...args);

/**
 * A Sluice limiter on Redis. A concurrency lease is given back as soon as granted (`release`), so a
 * benchmark measures take-and-give-back. `degraded()` counts decisions taken without Redis (a store
 * slower than storeTimeout): those are not Redis's.
 */
export function sluiceOnRedis(client, { name, policies, release = true, storeTimeout = '10s' }) {
  const limiter = core.createLimiter({
    name,
    policies,
    storeTimeout,
    store: new core.RedisStore({ client }),
  });
  return storeCalls(limiter, policies, release);
}

/** rate-limiter-flexible: resolves when allowed, rejects with a RateLimiterRes when not. */
export function rateLimiterFlexible(client, { limit, windowMs, prefix }) {
  const limiter = new RateLimiterRedis({
    storeClient: client,
    points: limit,
    duration: windowMs / 1000,
    keyPrefix: prefix,
  });
  return {
    limiter,
    call: (subject) =>
      limiter.consume(subject).then(
        () => true,
        (refusal) => {
          if (refusal instanceof RateLimiterRes) return false;
          throw refusal;
        },
      ),
    count: async (subject) => (await limiter.get(subject))?.consumedPoints ?? 0,
  };
}

/** rate-limit-redis, express-rate-limit's store, on any client: admitted while totalHits <= limit. */
export function rateLimitRedis(client, { limit, windowMs, prefix }) {
  const store = new RateLimitRedisStore({ sendCommand: sender(client), prefix });
  store.init({ windowMs });
  return {
    call: async (subject) => (await store.increment(subject)).totalHits <= limit,
    count: async (subject) => (await store.get(subject))?.totalHits ?? 0,
  };
}

/** @fastify/rate-limit's Redis store (ioredis only): admitted while current <= max, its hook's rule. */
export function fastifyRedis(client, { limit, windowMs, prefix }) {
  const store = new FastifyRedisStore(false, false, client, prefix);
  return {
    call: (subject) =>
      new Promise((resolve, reject) =>
        store.incr(
          subject,
          (error, r) => (error ? reject(error) : resolve(r.current <= limit)),
          windowMs,
          limit,
        ),
      ),
    count: async (subject) => Number((await client.get(prefix + subject)) ?? 0),
  };
}

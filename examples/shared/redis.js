import { Cluster, Redis } from 'ioredis';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_CLUSTER_NODES = '127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
/** How long to wait for the first PING before saying Redis is not there. */
const CONNECT_TIMEOUT_MS = 2_000;

/** Redis could not be reached; the message says how to start it. */
export class RedisUnreachableError extends Error {
  name = 'RedisUnreachableError';
}

/** `redis://user:secret@host:6379` -> `redis://host:6379`: a message never shows a password. */
function withoutCredentials(url) {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'REDIS_URL (unparseable)';
  }
}

/** Resolves when the client answers PING, rejects after CONNECT_TIMEOUT_MS or on the first error. */
async function ping(client) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
  });
  try {
    await Promise.race([client.ping(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * An ioredis client for REDIS_URL (default redis://127.0.0.1:6379), once it answers. Throws
 * RedisUnreachableError, saying how to start Redis, when it does not.
 */
export async function connectRedis(url = process.env.REDIS_URL || DEFAULT_REDIS_URL) {
  const client = new Redis(url, { lazyConnect: true });
  client.on('error', () => {}); // reported below, and through Sluice's onStoreError later
  try {
    await ping(client);
    return client;
  } catch (error) {
    client.disconnect();
    throw new RedisUnreachableError(
      `Cannot reach Redis at ${withoutCredentials(url)} (${error.message}).\n` +
        'Start one from the repository root with:   docker compose up -d redis\n' +
        'or point REDIS_URL at yours:                REDIS_URL=redis://host:6379',
    );
  }
}

/** "host:port,host:port" -> ioredis cluster start-up nodes. */
export function parseNodes(list) {
  return list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const at = entry.lastIndexOf(':');
      return { host: entry.slice(0, at), port: Number(entry.slice(at + 1)) };
    });
}

/**
 * An ioredis Cluster for REDIS_CLUSTER_NODES (default 127.0.0.1:7000-7002), once it answers. Throws
 * RedisUnreachableError, saying how to start the cluster, when it does not.
 */
export async function connectCluster(list = process.env.REDIS_CLUSTER_NODES || DEFAULT_CLUSTER_NODES) {
  const cluster = new Cluster(parseNodes(list), { lazyConnect: true });
  cluster.on('error', () => {});
  try {
    await ping(cluster);
    return cluster;
  } catch (error) {
    cluster.disconnect();
    throw new RedisUnreachableError(
      `Cannot reach a Redis Cluster at ${list} (${error.message}).\n` +
        'Start one from the repository root with:   docker compose --profile cluster up -d\n' +
        'or point REDIS_CLUSTER_NODES at yours:     REDIS_CLUSTER_NODES=host:7000,host:7001',
    );
  }
}

/** For the servers' start-up: print the hint and exit, or rethrow anything else. */
export function exitIfUnreachable(error) {
  if (!(error instanceof RedisUnreachableError)) throw error;
  console.error(error.message);
  process.exit(1);
}

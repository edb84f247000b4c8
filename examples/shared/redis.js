import { Cluster, Redis } from 'ioredis';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
export const DEFAULT_CLUSTER_NODES = '127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002';
/** How long the first connection may take before Redis counts as not there. */
const CONNECT_TIMEOUT_MS = 2_000;

/** Redis could not be reached; the message says how to start it. */
export class RedisUnreachableError extends Error {
  /** @override */
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

function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Connects a client made with `lazyConnect` and pings it. When that fails, disconnects it and throws
 * RedisUnreachableError: what could not be reached (`where`), why, and `hint`.
 */
async function connectOrExplain(client, where, hint) {
  // Errors are reported here at start-up, and by Sluice's onStoreError (degraded decisions) later.
  let lastError;
  client.on('error', (error) => {
    lastError = error;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    throw new RedisUnreachableError(`Cannot reach ${where} (${messageOf(lastError ?? error)}).\n${hint}`);
  }
}

/**
 * An ioredis client for REDIS_URL (default redis://127.0.0.1:6379), once it answers. Throws
 * RedisUnreachableError, saying how to start Redis, when it does not.
 */
export async function connectRedis(url = process.env.REDIS_URL || DEFAULT_REDIS_URL) {
  // No retries until the first connection works: an absent Redis is reported at once.
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: () => null,
  });
  await connectOrExplain(
    client,
    `Redis at ${withoutCredentials(url)}`,
    'Start one from the repository root with:   docker compose up -d redis\n' +
      'or without Docker:                          sudo apt-get install -y redis-server && redis-server --port 6379 --save ""\n' +
      'or point REDIS_URL at yours:                REDIS_URL=redis://host:6379',
  );
  // Connected: from now on reconnect after a drop, as ioredis does by default.
  client.options.retryStrategy = (times) => Math.min(times * 50, 2_000);
  return client;
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
  const cluster = new Cluster(parseNodes(list), {
    lazyConnect: true,
    clusterRetryStrategy: () => null,
    redisOptions: { connectTimeout: CONNECT_TIMEOUT_MS },
  });
  await connectOrExplain(
    cluster,
    `a Redis Cluster at ${list}`,
    'Start one from the repository root with:   docker compose --profile cluster up -d\n' +
      'or without Docker: three redis-server --cluster-enabled yes --port 7000 (7001, 7002), then\n' +
      '                   redis-cli --cluster create 127.0.0.1:7000 127.0.0.1:7001 127.0.0.1:7002\n' +
      'or point REDIS_CLUSTER_NODES at yours:     REDIS_CLUSTER_NODES=host:7000,host:7001',
  );
  cluster.options.clusterRetryStrategy = (times) => Math.min(100 + times * 2, 2_000);
  return cluster;
}

/**
 * For the servers' start-up: print the hint and exit, or rethrow anything else.
 * @param {unknown} error
 * @returns {never}
 */
export function exitIfUnreachable(error) {
  if (!(error instanceof RedisUnreachableError)) throw error;
  console.error(error.message);
  process.exit(1);
}

import type { RedisScriptClient } from './ioredis.js';
import { ioRedisRunner, isIoRedis } from './ioredis.js';
import type { NodeRedisScriptClient, NodeRedisScriptCluster } from './node-redis.js';
import { isNodeRedis, nodeRedisRunner } from './node-redis.js';

/** Every Redis client RedisStore accepts. */
export type RedisClient = RedisScriptClient | NodeRedisScriptClient | NodeRedisScriptCluster;

/**
 * What RedisStore needs of a client, whichever library it comes from: run the script by SHA (a
 * NOSCRIPT error when the server lacks it), run it by source, and whether it talks to a cluster.
 * `args` holds the keys first, then the arguments.
 */
export interface ScriptRunner {
  /** A batch then holds one hash tag's calls: calls may share a script run only within one slot. */
  readonly isCluster: boolean;
  evalsha(sha: string, numKeys: number, args: Array<string | number>): Promise<unknown>;
  eval(script: string, numKeys: number, args: Array<string | number>): Promise<unknown>;
}

/** The runner for a client, told apart by its shape (no client library is imported); undefined for anything else. */
export function runnerFor(client: unknown): ScriptRunner | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  // node-redis first: it has no lowercase `evalsha`, and ioredis no `evalSha`.
  if (isNodeRedis(client)) return nodeRedisRunner(client);
  if (isIoRedis(client)) return ioRedisRunner(client);
  return undefined;
}

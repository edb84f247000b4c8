import type { RedisScriptClient } from './ioredis.js';
import { ioRedisRunner, isIoRedis } from './ioredis.js';
import type { NodeRedisScriptClient, NodeRedisScriptCluster } from './node-redis.js';
import { isNodeRedis, nodeRedisRunner } from './node-redis.js';
import { isUpstash, type UpstashScriptClient, upstashRunner } from './upstash.js';

/** Every Redis client RedisStore accepts. */
export type RedisClient =
  | RedisScriptClient
  | NodeRedisScriptClient
  | NodeRedisScriptCluster
  | UpstashScriptClient;

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
  /** Where the client writes some commands later than the end of their turn: Store.afterSent. */
  afterSent?(task: () => void): void;
}

/**
 * Objects that look like a client but answer commands otherwise (callbacks, or queued until `exec`):
 * what is wrong with them, to say so at construction; undefined for anything else.
 */
export function misuseOf(client: unknown): string | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const shape = client as Record<string, unknown>;
  if (shape.isPipeline === true) return 'an ioredis pipeline (pass the client itself)';
  if (typeof shape.execAsPipeline === 'function') return 'a node-redis multi (pass the client itself)';
  // node-redis v4's legacyMode answers by callback; its promise API is `client.v4`.
  const options = shape.options as { legacyMode?: unknown } | undefined;
  if (options?.legacyMode === true) return 'a node-redis legacyMode client (pass client.v4)';
  return undefined;
}

/** The runner for a client, told apart by its shape (no client library is imported); undefined for anything else. */
export function runnerFor(client: unknown): ScriptRunner | undefined {
  if (typeof client !== 'object' || client === null || misuseOf(client) !== undefined) return undefined;
  // node-redis first: it has no lowercase `evalsha`, and ioredis no `evalSha`.
  if (isNodeRedis(client)) return nodeRedisRunner(client);
  // Before ioredis: @upstash/redis has `evalsha` and `eval` too, taking keys and arguments as arrays.
  if (isUpstash(client)) return upstashRunner(client);
  if (isIoRedis(client)) return ioRedisRunner(client);
  return undefined;
}

import type { ScriptRunner } from './runner.js';

/**
 * An ioredis or iovalkey `Redis` or `Cluster` (iovalkey is ioredis's fork, with the same API): the
 * cluster client routes each call by its first key, and every key of a call shares one slot.
 */
export interface RedisScriptClient {
  evalsha(sha: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
  /** True for a Redis Cluster client (ioredis `Cluster`): a batch then holds one hash tag's calls. */
  readonly isCluster?: boolean;
  /**
   * When the client has it (ioredis does), each batch is written at once through a pipeline of its one
   * command: ioredis's auto-pipelining would hold it for a further turn of the event loop.
   */
  pipeline?(): {
    evalsha(
      sha: string,
      numKeys: number,
      ...args: Array<string | number>
    ): {
      exec(): Promise<Array<[Error | null, unknown]> | null>;
    };
  };
}

export function isIoRedis(value: object): value is RedisScriptClient {
  const client = value as RedisScriptClient;
  return typeof client.evalsha === 'function' && typeof client.eval === 'function';
}

export function ioRedisRunner(client: RedisScriptClient): ScriptRunner {
  const { pipeline } = client;
  return {
    isCluster: client.isCluster === true,
    evalsha:
      pipeline === undefined
        ? (sha, numKeys, args) => client.evalsha(sha, numKeys, ...args)
        : (sha, numKeys, args) =>
            pipeline
              .call(client)
              .evalsha(sha, numKeys, ...args)
              .exec()
              .then((results) => {
                const [error, reply] = results![0]!;
                if (error) throw error;
                return reply;
              }),
    eval: (script, numKeys, args) => client.eval(script, numKeys, ...args),
  };
}

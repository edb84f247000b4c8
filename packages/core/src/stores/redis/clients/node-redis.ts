import type { ScriptRunner } from './runner.js';

/** A node-redis (the `redis` package) v4 or v5 client, from `createClient`. */
export interface NodeRedisScriptClient {
  /** Only told apart by: node-redis has it, ioredis has `evalsha`. */
  readonly evalSha: object;
  sendCommand(args: string[]): Promise<unknown>;
}

/** A node-redis v4 or v5 cluster, from `createCluster`: it routes each command by the key given. */
export interface NodeRedisScriptCluster {
  /** Only told apart by: node-redis has it, ioredis has `evalsha`. */
  readonly evalSha: object;
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: string[],
  ): Promise<unknown>;
  readonly masters: unknown;
  readonly slots: unknown;
}

export function isNodeRedis(value: object): value is NodeRedisScriptClient | NodeRedisScriptCluster {
  const client = value as NodeRedisScriptClient;
  return typeof client.evalSha === 'function' && typeof client.sendCommand === 'function';
}

/** A node-redis cluster has its masters and slots; a single client has neither. */
function isCluster(client: NodeRedisScriptClient | NodeRedisScriptCluster): client is NodeRedisScriptCluster {
  return 'masters' in client && 'slots' in client;
}

/** The command as node-redis sends it: every argument a string (it refuses numbers). */
function command(
  name: string,
  body: string,
  numKeys: number,
  args: ReadonlyArray<string | number>,
): string[] {
  const line = new Array<string>(args.length + 3);
  line[0] = name;
  line[1] = body;
  line[2] = String(numKeys);
  for (let i = 0; i < args.length; i++) line[i + 3] = String(args[i]);
  return line;
}

/**
 * Commands go through `sendCommand`: node-redis v4's cluster routes `eval`/`evalSha` by the script
 * instead of the first key (a MOVED it then chases at random), while `sendCommand` takes the key.
 */
export function nodeRedisRunner(client: NodeRedisScriptClient | NodeRedisScriptCluster): ScriptRunner {
  if (isCluster(client)) {
    // Every key of a call shares one slot: the first routes it.
    const send = (name: string, body: string, numKeys: number, args: Array<string | number>) =>
      client.sendCommand(args[0] as string, false, command(name, body, numKeys, args));
    return {
      isCluster: true,
      evalsha: (sha, numKeys, args) => send('EVALSHA', sha, numKeys, args),
      eval: (script, numKeys, args) => send('EVAL', script, numKeys, args),
    };
  }
  return {
    isCluster: false,
    evalsha: (sha, numKeys, args) => client.sendCommand(command('EVALSHA', sha, numKeys, args)),
    eval: (script, numKeys, args) => client.sendCommand(command('EVAL', script, numKeys, args)),
  };
}

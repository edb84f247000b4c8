import type { ScriptRunner } from './runner.js';

/**
 * An `@upstash/redis` `Redis` (also what `@vercel/kv` hands out): Redis over HTTP, each command one
 * POST of a JSON array. One store call is one EVALSHA, so one HTTP request, tiers included; with the
 * client's auto-pipelining (its default), calls made in one turn share one request (`/pipeline`).
 */
export interface UpstashScriptClient {
  evalsha(sha: string, keys: string[], args: string[]): Promise<unknown>;
  eval(script: string, keys: string[], args: string[]): Promise<unknown>;
  /** Only told apart by: ioredis has `evalsha` and `eval` too, with keys and arguments spread. */
  readonly createScript: object;
}

export function isUpstash(value: object): value is UpstashScriptClient {
  const client = value as UpstashScriptClient;
  return (
    typeof client.createScript === 'function' &&
    typeof client.evalsha === 'function' &&
    typeof client.eval === 'function'
  );
}

/** How the client's auto-pipelining words a command's error: before Redis's own words. */
const PIPELINED = 'Command failed: ';

/**
 * Redis's own words of the client's error, so NOSCRIPT reads as NOSCRIPT whether the command went
 * alone or in a pipeline. Errors of lone commands end with `command was: [...]`, the whole command:
 * its keys hold subjects (client addresses), which must not reach logs or the store-error channel.
 */
function redisError(error: unknown): never {
  if (!(error instanceof Error)) throw error;
  let message = error.message;
  if (message.startsWith(PIPELINED)) message = message.slice(PIPELINED.length);
  const cut = message.indexOf(', command was: ');
  if (cut >= 0) message = message.slice(0, cut);
  if (message === error.message) throw error;
  throw new Error(message);
}

export function upstashRunner(client: UpstashScriptClient): ScriptRunner {
  const split = (numKeys: number, args: Array<string | number>) => {
    const strings = args.map(String);
    return [strings.slice(0, numKeys), strings.slice(numKeys)] as const;
  };
  return {
    isCluster: false,
    evalsha: (sha, numKeys, args) => client.evalsha(sha, ...split(numKeys, args)).catch(redisError),
    eval: (script, numKeys, args) => client.eval(script, ...split(numKeys, args)).catch(redisError),
  };
}

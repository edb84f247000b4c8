import { soon } from '../../../portable/runtime.js';
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
  on?(event: string, listener: () => void): unknown;
}

/** At most one topology nudge (see nudger) this often. */
const NUDGE_MS = 250;

/**
 * node-redis clusters reconnect to a master that died, and look for the new topology only when a node
 * answers MOVED: after a failover they would wait for the dead master for ever, where ioredis moves to
 * the promoted replica. While a node fails (its errors, or a call's), this asks a node picked at random
 * (no key given) for a key of the last call, at most every NUDGE_MS: a node that does not serve its
 * slot answers MOVED, and node-redis rediscovers the cluster. A GET changes nothing.
 */
interface Nudger {
  nudge(): void;
  sent(key: string): void;
}

/** What `make` gives for `client`, made once per client however many stores share it. */
function perClient<C extends object, T>(made: WeakMap<C, T>, client: C, make: (client: C) => T): T {
  let found = made.get(client);
  if (found === undefined) {
    found = make(client);
    made.set(client, found);
  }
  return found;
}

/** One nudger per cluster client: its listeners are added once. */
const nudgers = new WeakMap<NodeRedisScriptCluster, Nudger>();

function nudger(client: NodeRedisScriptCluster): Nudger {
  let lastKey: string | undefined;
  let lastNudge = Number.NEGATIVE_INFINITY;
  const nudge = () => {
    const now = performance.now();
    if (lastKey === undefined || now - lastNudge < NUDGE_MS) return;
    lastNudge = now;
    client.sendCommand(undefined, false, ['GET', lastKey]).catch(() => {});
  };
  // v5 (which has `_slots`) reports a node's errors as 'node-error'; v4 only as 'error', so there the
  // store listens to 'error' too (an app should listen to it as well, to log them).
  client.on?.('_slots' in client ? 'node-error' : 'error', nudge);
  return {
    nudge,
    sent: (key) => {
      lastKey = key;
    },
  };
}

/** A reply of the server (MOVED, NOSCRIPT, ERR …) rather than a failure to reach it. */
function isReply(error: unknown): boolean {
  return error instanceof Error && /^[A-Z]{2,} /.test(error.message);
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
    const topology = perClient(nudgers, client, nudger);
    // Every key of a call shares one slot: the first routes it.
    const send = (name: string, body: string, numKeys: number, args: Array<string | number>) => {
      const key = args[0] as string;
      topology.sent(key);
      return client.sendCommand(key, false, command(name, body, numKeys, args)).catch((error: unknown) => {
        if (!isReply(error)) topology.nudge();
        throw error;
      });
    };
    return {
      isCluster: true,
      evalsha: (sha, numKeys, args) => send('EVALSHA', sha, numKeys, args),
      eval: (script, numKeys, args) => send('EVAL', script, numKeys, args),
    };
  }
  const self = (client as { _self?: NodeRedisScriptClient })._self ?? client;
  const paced = perClient(pacers, self, pacer);
  return {
    isCluster: false,
    evalsha: (sha, numKeys, args) => paced.send(client, command('EVALSHA', sha, numKeys, args)),
    eval: (script, numKeys, args) => paced.send(client, command('EVAL', script, numKeys, args)),
    afterSent: paced.afterSent,
  };
}

/** Sends a command, paced; runs a task once the commands given so far are written (Store.afterSent). */
interface Pacer {
  send(client: NodeRedisScriptClient, args: string[]): Promise<unknown>;
  afterSent(task: () => void): void;
}

/**
 * One pacer per connection: the client writes once a turn for all the stores on it. Keyed by `_self`,
 * the client itself, where node-redis 5 and 6 hand out views of it that share its socket
 * (withCommandOptions, withTypeMapping, asap: Object.create(client)).
 */
const pacers = new WeakMap<NodeRedisScriptClient, Pacer>();

/**
 * node-redis writes every command of a turn of the event loop together, at `setImmediate`. Batches
 * whose replies came in one read are made again in one turn, and were written, decided and answered
 * together: this process and Redis took turns, each idle while the other worked (Redis read exactly
 * 2.00 scripts per read at 64 calls in flight; ioredis, which writes each batch at once, 1.5 to 1.8).
 * So the first command of a turn goes at once and those after it a turn later, in order, written
 * together: Redis decides the first while this process still makes the rest. The wait is before the
 * command is sent, so a reply is handed on as it is read (a reply held back instead was failed by
 * storeTimeout's expiry, which runs once the replies already read are handed on: 79bc5e6), and the
 * calls of a held command start their storeTimeout once it is written (afterSent): a handler of the
 * first batch's replies that ran past storeTimeout, before the rest were written, failed them (the
 * hostile review of d942ce9). A cluster's batches are one hash tag each, spread over its nodes: not
 * paced.
 */
function pacer(): Pacer {
  /** Whether a command went this turn (the client's write of it is queued). */
  let sent = false;
  const turnOver = () => {
    sent = false;
  };
  /** Commands waiting for the next turn, in order; undefined when none waits. */
  let held: Array<() => void> | undefined;
  /** Tasks waiting for the held commands to be written. */
  let waitingForWrite: Array<() => void> = [];
  const release = () => {
    const commands = held!;
    held = undefined;
    sent = true;
    soon(turnOver);
    for (const go of commands) go();
    if (waitingForWrite.length > 0) {
      const tasks = waitingForWrite;
      waitingForWrite = [];
      // Queued after the client's write of what was just sent: they run once it is written.
      soon(() => {
        for (const task of tasks) task();
      });
    }
  };
  return {
    send(client, args) {
      if (held === undefined && !sent) {
        sent = true;
        // Queued after the client's write of this command: the turn is over once it is written.
        soon(turnOver);
        return sendNow(client, args);
      }
      if (held === undefined) {
        held = [];
        soon(release);
      }
      const commands = held;
      return new Promise((resolve) => commands.push(() => resolve(sendNow(client, args))));
    },
    afterSent(task) {
      if (held === undefined) task();
      else waitingForWrite.push(task);
    },
  };
}

/** client.sendCommand, a throw as a rejection (of this command alone). */
function sendNow(client: NodeRedisScriptClient, args: string[]): Promise<unknown> {
  try {
    return client.sendCommand(args);
  } catch (error) {
    return Promise.reject(error);
  }
}

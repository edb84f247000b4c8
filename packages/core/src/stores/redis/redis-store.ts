import { describeValue, ErrorCodes, SluiceConfigError } from '../../errors.js';
import type { PolicyOutcome, RefundCall, Store, StoreCall, StoreLimiter, StoreOutcome } from '../store.js';
import { planOf } from './keys.js';
import { CALL_ARGS, NEVER, Op, REPLY_FIELDS, script, scriptSha } from './script.js';

/**
 * What the store needs of a Redis client: EVALSHA and EVAL. An ioredis `Redis` or `Cluster` fits (the
 * cluster client routes each call by its first key, and every key of a call shares one slot).
 */
export interface RedisScriptClient {
  evalsha(sha: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
}

export interface RedisStoreOptions {
  /** An ioredis `Redis` or `Cluster` (or any client with `evalsha` and `eval`). */
  client: RedisScriptClient;
  /** Milliseconds since the epoch, instead of Redis `TIME`; for tests (a manual clock). */
  clock?: () => number;
}

const OPTION_KEYS = new Set(['client', 'clock']);

function isScriptClient(value: unknown): value is RedisScriptClient {
  const client = value as RedisScriptClient;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof client.evalsha === 'function' &&
    typeof client.eval === 'function'
  );
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * A store in Redis: one Lua script decides each call of every algorithm and every multi-policy
 * limiter all-or-nothing in one round trip, by Redis `TIME` unless a clock is given. Keys carry a
 * hash tag (keys.ts), so a call's keys share one Redis Cluster slot; every key has a TTL.
 */
export class RedisStore implements Store {
  readonly local = false;
  readonly clock: (() => number) | undefined;
  private readonly client: RedisScriptClient;

  constructor(options: RedisStoreOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_OPTION,
        'RedisStore',
        `expected an options object { client }; got ${describeValue(options)}`,
      );
    }
    for (const key of Object.keys(options)) {
      if (!OPTION_KEYS.has(key)) {
        throw new SluiceConfigError(
          ErrorCodes.UNKNOWN_OPTION,
          `RedisStore.${key}`,
          'unknown option; expected client or clock',
        );
      }
    }
    const { client, clock } = options;
    if (!isScriptClient(client)) {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_STORE,
        'RedisStore.client',
        `expected an ioredis Redis or Cluster (a client with evalsha and eval); got ${describeValue(client)}`,
      );
    }
    if (clock !== undefined && typeof clock !== 'function') {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_OPTION,
        'RedisStore.clock',
        `expected a function; got ${describeValue(clock)}`,
      );
    }
    this.client = client;
    this.clock = clock;
  }

  consume(call: StoreCall): Promise<StoreOutcome> {
    const plan = planOf(call.limiter);
    const args = this.args(
      plan.size,
      call.mode === 'consume' ? Op.consume : Op.peek,
      call.cost,
      call.leaseId,
      0,
    );
    plan.keys(call.subject, args, 0);
    this.appendParams(args, plan.params);
    return this.run(plan.size, args).then((reply) => decode(reply as ArrayLike<number | string>, plan.size));
  }

  async refund(call: RefundCall): Promise<void> {
    const plan = planOf(call.limiter);
    const { cost, chargedAt, leaseId } = call.charge;
    const args = this.args(plan.size, Op.refund, cost, leaseId, chargedAt);
    plan.keys(call.subject, args, 0);
    this.appendParams(args, plan.params);
    await this.run(plan.size, args);
  }

  async reset(limiter: StoreLimiter, subject: string): Promise<void> {
    const keys: Array<string | number> = planOf(limiter).subjectKeys(subject);
    if (keys.length === 0) return;
    const size = keys.length;
    keys.push(Op.reset, '', 0, 0, 0);
    await this.run(size, keys);
  }

  /** Room for the keys, then the call's arguments; the policies' follow. */
  private args(
    size: number,
    op: Op,
    cost: number,
    leaseId: number,
    chargedAt: number,
  ): Array<string | number> {
    const args: Array<string | number> = new Array(size + CALL_ARGS);
    args[size] = op;
    args[size + 1] = this.clock === undefined ? '' : this.clock();
    args[size + 2] = cost;
    args[size + 3] = leaseId;
    args[size + 4] = chargedAt;
    return args;
  }

  private appendParams(args: Array<string | number>, params: readonly string[]): void {
    for (let i = 0; i < params.length; i++) args.push(params[i]!);
  }

  /** EVALSHA, and EVAL when the server does not hold the script (first use, restart, SCRIPT FLUSH). */
  private run(numKeys: number, args: Array<string | number>): Promise<unknown> {
    let sent: Promise<unknown>;
    try {
      sent = this.client.evalsha(scriptSha, numKeys, ...args);
    } catch (error) {
      return Promise.reject(error);
    }
    return sent.catch((error: unknown) => {
      if (isNoScript(error)) return this.client.eval(script, numKeys, ...args);
      throw error;
    });
  }
}

/** The script's integers back into outcomes (a client may hand integers as strings). */
function decode(reply: ArrayLike<number | string>, size: number): StoreOutcome {
  const steps: PolicyOutcome[] = new Array(size);
  for (let i = 0; i < size; i++) {
    const at = 1 + REPLY_FIELDS * i;
    const retryAfterMs = Number(reply[at + 3]);
    steps[i] = {
      allowed: Number(reply[at]) === 1,
      remaining: Number(reply[at + 1]),
      resetMs: Number(reply[at + 2]),
      retryAfterMs: retryAfterMs === NEVER ? Number.POSITIVE_INFINITY : retryAfterMs,
      delayMs: Number(reply[at + 4]),
    };
  }
  return { now: Number(reply[0]), steps };
}

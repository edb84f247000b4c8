import { describeValue, ErrorCodes, SluiceConfigError } from '../../errors.js';
import type { PolicyOutcome, RefundCall, Store, StoreCall, StoreLimiter, StoreOutcome } from '../store.js';
import { type KeyPlan, planOf } from './keys.js';
import { NEVER, Op, REPLY_FIELDS, script, scriptSha } from './script.js';

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
    const args = this.args(plan, call.subject, call.mode === 'consume' ? Op.consume : Op.peek, call.cost);
    if (this.clock !== undefined) args.push(call.leaseId, 0, this.clock());
    else if (call.leaseId !== 0) args.push(call.leaseId);
    return this.run(plan.size, args, decode);
  }

  async refund(call: RefundCall): Promise<void> {
    const plan = planOf(call.limiter);
    const { cost, chargedAt, leaseId } = call.charge;
    const args = this.args(plan, call.subject, Op.refund, cost);
    args.push(leaseId, chargedAt);
    if (this.clock !== undefined) args.push(this.clock());
    await this.run(plan.size, args, ignore);
  }

  async reset(limiter: StoreLimiter, subject: string): Promise<void> {
    const keys: Array<string | number> = planOf(limiter).subjectKeys(subject);
    if (keys.length === 0) return;
    const size = keys.length;
    keys.push(Op.reset);
    await this.run(size, keys, ignore);
  }

  /**
   * The keys, op and cost, then the policies' arguments; the trailing ones (lease id, chargedAt,
   * clock) are the caller's to add, each only when it or a later one is given (script.ts).
   */
  private args(plan: KeyPlan, subject: string, op: Op, cost: number): Array<string | number> {
    const { size, params } = plan;
    const args: Array<string | number> = new Array(size + 2 + params.length);
    plan.keys(subject, args, 0);
    args[size] = op;
    args[size + 1] = cost;
    for (let i = 0, at = size + 2; i < params.length; i++, at++) args[at] = params[i]!;
    return args;
  }

  /**
   * EVALSHA, and EVAL when the server does not hold the script (first use, restart, SCRIPT FLUSH);
   * the reply goes to `read` (one promise per call, not one per step).
   */
  private run<T>(numKeys: number, args: Array<string | number>, read: (reply: unknown) => T): Promise<T> {
    let sent: Promise<unknown>;
    try {
      sent = this.client.evalsha(scriptSha, numKeys, ...args);
    } catch (error) {
      return Promise.reject(error);
    }
    return sent.then(read, (error: unknown) => {
      if (isNoScript(error)) return this.client.eval(script, numKeys, ...args).then(read);
      throw error;
    });
  }
}

/** What a refund or a reset does with the script's reply: nothing. */
function ignore(): void {}

/** The script's integers back into outcomes (a client may hand integers as strings). */
function decode(reply: unknown): StoreOutcome {
  const fields = reply as ArrayLike<number | string>;
  const size = (fields.length - 1) / REPLY_FIELDS;
  const steps: PolicyOutcome[] = new Array(size);
  for (let i = 0; i < size; i++) {
    const at = 1 + REPLY_FIELDS * i;
    const retryAfterMs = Number(fields[at + 3]);
    steps[i] = {
      allowed: Number(fields[at]) === 1,
      remaining: Number(fields[at + 1]),
      resetMs: Number(fields[at + 2]),
      retryAfterMs: retryAfterMs === NEVER ? Number.POSITIVE_INFINITY : retryAfterMs,
      delayMs: Number(fields[at + 4]),
    };
  }
  return { now: Number(fields[0]), steps };
}

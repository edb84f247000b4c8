import { describeValue, ErrorCodes, SluiceConfigError } from '../../errors.js';
import { soon } from '../../portable/runtime.js';
import { GIVEN_CLIENT } from '../given-client.js';
import type { PolicyOutcome, RefundCall, Store, StoreCall, StoreLimiter, StoreOutcome } from '../store.js';
import { misuseOf, type RedisClient, runnerFor, type ScriptRunner } from './clients/runner.js';
import { redisStoreHint } from './foreign-options.js';
import { type KeyPlan, planOf } from './keys.js';
import { offlineQueueCheck } from './offline-queue.js';
import { NEVER, Op, REPLY_FIELDS, script, scriptSha } from './script.js';

/**
 * A batch is sent as soon as it holds this many calls, the rest at the end of the turn: Redis then
 * decides the first calls of a burst while the process still makes the later ones, instead of the two
 * taking turns (about 1.5 times the decisions per second at 64 calls in flight, measured), and a
 * script run holds Redis for well under a millisecond.
 */
const MAX_BATCH_CALLS = 32;

/** Calls of one limiter (and, on a cluster, one hash tag) waiting for the next flush. */
interface Batch {
  readonly plan: KeyPlan;
  /** The hash tag its keys share on a cluster; '' on a standalone server. */
  readonly tag: string;
  /** n keys per call, in call order. */
  readonly keys: string[];
  /** Per call: signed cost (negative: a peek), lease id and, with a caller's clock, now. */
  readonly calls: number[];
  /**
   * True while every call is the commonest one, a consume of cost 1 without a lease under Redis TIME:
   * the script is then sent no per-call arguments at all.
   */
  plain: boolean;
  readonly waiters: Waiter[];
}

interface Waiter {
  resolve(outcome: StoreOutcome): void;
  reject(error: unknown): void;
  /** The caller's clock when the call was made; 0 under Redis TIME. */
  readonly now: number;
}

export interface RedisStoreOptions {
  /**
   * An ioredis or iovalkey `Redis` or `Cluster`, a node-redis v4/v5/v6 client (`createClient`) or
   * cluster (`createCluster`), or an `@upstash/redis` `Redis` (HTTP; `@vercel/kv` too).
   */
  client: RedisClient;
  /** Milliseconds since the epoch, instead of Redis `TIME`; for tests (a manual clock). */
  clock?: () => number;
}

const OPTION_KEYS = new Set(['client', 'clock']);

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
  private readonly client: ScriptRunner;
  /**
   * Store.afterSent, only on a client that writes a turn's later batches a turn late (node-redis):
   * on the others a call's time starts at the end of its turn, with nothing asked per turn.
   */
  readonly afterSent?: (task: () => void) => void;
  /** Looks once, at the first call, for a client that refuses calls until connected (offline-queue.ts). */
  private firstCall: (() => void) | undefined;

  constructor(options: RedisStoreOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_OPTION,
        'RedisStore',
        `expected an options object { client }; got ${describeValue(options)}`,
      );
    }
    // Every unknown option in one error, each with what to write instead (API.md r3).
    const unknown = Object.keys(options).filter((key) => !OPTION_KEYS.has(key));
    if (unknown.length > 0) {
      const given = options as unknown as Record<string, unknown>;
      // The first is the error's option, named before the message, as rejectUnknown names it.
      const hints = unknown.map(
        (key, i) => `${i === 0 ? '' : `RedisStore.${key}: `}unknown option${redisStoreHint(key, given[key])}`,
      );
      throw new SluiceConfigError(
        ErrorCodes.UNKNOWN_OPTION,
        `RedisStore.${unknown[0]}`,
        `${hints.join('; ')}; expected client or clock`,
      );
    }
    const { client, clock } = options;
    const runner = runnerFor(client);
    if (runner === undefined) {
      const misuse = misuseOf(client);
      throw new SluiceConfigError(
        ErrorCodes.INVALID_STORE,
        'RedisStore.client',
        `expected an ioredis or iovalkey Redis or Cluster, a node-redis client or cluster (createClient, createCluster), or an @upstash/redis Redis (@vercel/kv); got ${misuse ?? describeValue(client)}`,
      );
    }
    const keyPrefix = (client as { options?: { keyPrefix?: unknown } }).options?.keyPrefix;
    if (typeof keyPrefix === 'string' && keyPrefix !== '') {
      // ioredis would put it before every key: counters no longer shared with clients without it, and
      // a '{' in it would move the hash tag (CROSSSLOT on a cluster).
      throw new SluiceConfigError(
        ErrorCodes.INVALID_STORE,
        'RedisStore.client',
        `the client has keyPrefix ${JSON.stringify(keyPrefix)}, which would change Sluice's keys; give Sluice a client without it and set the limiter's prefix option instead`,
      );
    }
    if (clock !== undefined && typeof clock !== 'function') {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_OPTION,
        'RedisStore.clock',
        `expected a function; got ${describeValue(clock)}`,
      );
    }
    this.client = runner;
    const after = runner.afterSent;
    if (after !== undefined) {
      // Asked before this turn's batches went: once they have, the client knows what it holds. Not by
      // sending them now, which put this store's batches before those of another store on the client
      // made earlier in the turn (hostile review of aa81248).
      this.afterSent = (task) => {
        if (this.flushing) this.sentLater.push(task);
        else after(task);
      };
    }
    Object.defineProperty(this, GIVEN_CLIENT, { value: client });
    this.clock = clock;
    this.firstCall = offlineQueueCheck(client);
  }

  /**
   * Joins the call to its limiter's batch: the calls made before the event loop next turns go to Redis
   * together (MAX_BATCH_CALLS at a time), one script run deciding each of them in order, so a burst of
   * calls costs Redis one command and one reply, and the client one request, per batch instead of per
   * call. Each call still takes a single round trip.
   */
  consume(call: StoreCall): Promise<StoreOutcome> {
    if (this.firstCall !== undefined) {
      this.firstCall();
      this.firstCall = undefined;
    }
    const plan = planOf(call.limiter);
    const now = this.clock === undefined ? 0 : this.clock();
    const batch = this.batchOf(plan, call.subject);
    plan.keys(call.subject, batch.keys);
    const cost = call.mode === 'consume' ? call.cost : -call.cost;
    batch.calls.push(cost, call.leaseId);
    if (this.clock !== undefined) batch.calls.push(now);
    else if (cost !== 1 || call.leaseId !== 0) batch.plain = false;
    const outcome = new Promise<StoreOutcome>((resolve, reject) => {
      batch.waiters.push({ resolve, reject, now });
    });
    if (batch.waiters.length >= MAX_BATCH_CALLS) this.send(batch);
    return outcome;
  }

  async refund(call: RefundCall): Promise<void> {
    const plan = planOf(call.limiter);
    const { cost, chargedAt, leaseId } = call.charge;
    const args: Array<string | number> = [];
    plan.keys(call.subject, args);
    plan.marks(call.subject, args);
    args.push(Op.refund, plan.size, this.clockMode(), ...plan.params, cost, leaseId, chargedAt);
    if (this.clock !== undefined) args.push(this.clock());
    await this.run(2 * plan.size, args);
  }

  async reset(limiter: StoreLimiter, subject: string): Promise<void> {
    const plan = planOf(limiter);
    const keys = plan.subjectKeys(subject);
    if (keys.length === 0) return;
    const size = keys.length;
    keys.push(Op.reset, size / 2, this.clockMode(), this.clock?.() ?? 0, ...plan.markLives);
    await this.run(size, keys);
  }

  /** Open batches by limiter and hash tag. */
  private readonly pending = new Map<KeyPlan, Map<string, Batch>>();
  private flushing = false;
  /** afterSent's tasks asked for before this turn's batches were sent (see afterSent). */
  private sentLater: Array<() => void> = [];

  /** The open batch a call of `plan` for `subject` joins; a flush is due once one is open. */
  private batchOf(plan: KeyPlan, subject: string): Batch {
    // Calls may share a script run only when their keys share a slot: on a cluster, a hash tag's.
    const tag = this.client.isCluster ? plan.tagOf(subject) : '';
    let open = this.pending.get(plan);
    if (open === undefined) {
      open = new Map();
      this.pending.set(plan, open);
    }
    let batch = open.get(tag);
    if (batch === undefined) {
      batch = { plan, tag, keys: [], calls: [], plain: this.clock === undefined, waiters: [] };
      open.set(tag, batch);
      if (!this.flushing) {
        this.flushing = true;
        soon(() => this.flush());
      }
    }
    return batch;
  }

  private flush(): void {
    this.flushing = false;
    for (const open of this.pending.values()) for (const batch of open.values()) this.send(batch);
    if (this.sentLater.length > 0) {
      const tasks = this.sentLater;
      this.sentLater = [];
      for (const task of tasks) this.client.afterSent!(task);
    }
  }

  /** Sends a batch: its keys, the header, then each call's arguments; each waiter gets its outcome. */
  private send(batch: Batch): void {
    const { plan, keys, calls, plain, waiters } = batch;
    this.pending.get(plan)!.delete(batch.tag);
    const numKeys = keys.length;
    const args: Array<string | number> = keys;
    args.push(Op.batch, plan.size, plain ? 'p' : this.clockMode(), ...plan.params);
    if (!plain) for (let i = 0; i < calls.length; i++) args.push(calls[i]!);
    this.run(numKeys, args).then(
      (reply) => {
        const fields = reply as ArrayLike<number | string>;
        let i = 0;
        try {
          for (; i < waiters.length; i++) waiters[i]!.resolve(decode(fields, i, plan.size, waiters[i]!.now));
        } catch (error) {
          // Not the script's reply (a client that answers otherwise): a store failure, never unhandled.
          for (; i < waiters.length; i++) waiters[i]!.reject(error);
        }
      },
      (error: unknown) => {
        for (const waiter of waiters) waiter.reject(error);
      },
    );
  }

  /** How the script reads the time: 't' Redis TIME, 'c' the caller's clock in the arguments. */
  private clockMode(): 'c' | 't' {
    return this.clock === undefined ? 't' : 'c';
  }

  /** EVALSHA, and EVAL when the server does not hold the script (first use, restart, SCRIPT FLUSH). */
  private run(numKeys: number, args: Array<string | number>): Promise<unknown> {
    let sent: Promise<unknown>;
    try {
      sent = this.client.evalsha(scriptSha, numKeys, args);
      if (typeof sent?.then !== 'function') throw new Error('the Redis client did not answer with a promise');
    } catch (error) {
      return Promise.reject(error);
    }
    return sent.catch((error: unknown) => {
      if (isNoScript(error)) return this.client.eval(script, numKeys, args);
      throw error;
    });
  }
}

/**
 * Call `index`'s outcome from a batch's reply (a client may hand integers as strings): `now` is the
 * caller's clock of that call, or 0 to take Redis TIME from the reply.
 */
function decode(fields: ArrayLike<number | string>, index: number, size: number, now: number): StoreOutcome {
  const steps: PolicyOutcome[] = new Array(size);
  for (let i = 0; i < size; i++) {
    const at = 1 + REPLY_FIELDS * (index * size + i);
    const retryAfterMs = Number(fields[at + 3]);
    steps[i] = {
      allowed: Number(fields[at]) === 1,
      remaining: Number(fields[at + 1]),
      resetMs: Number(fields[at + 2]),
      retryAfterMs: retryAfterMs === NEVER ? Number.POSITIVE_INFINITY : retryAfterMs,
      delayMs: Number(fields[at + 4]),
    };
  }
  return { now: now === 0 ? Number(fields[0]) : now, steps };
}

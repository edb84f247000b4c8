import { describeValue, ErrorCodes, SluiceConfigError } from '../../errors.js';
import { soon } from '../../portable/runtime.js';
import { GIVEN_POSTGRES } from '../given-client.js';
import type { PolicyOutcome, RefundCall, Store, StoreCall, StoreLimiter, StoreOutcome } from '../store.js';
import { markLifeMs, markOf } from '../store.js';
import { batchSql, MAX_BATCH_CALLS, type Queued, settle } from './batch.js';
import { type PostgresClient, type SqlRunner, sqlRunnerFor } from './clients/runner.js';
import { Readiness } from './readiness.js';
import { DEFAULT_TABLE, namesOf, parseTable, schemaSql, type TableName } from './schema.js';
import { bigintElements, textElements } from './sql-literals.js';

export interface PostgresStoreOptions {
  /** A `pg` Pool or Client, or a postgres.js instance (`postgres(url)`). */
  client: PostgresClient;
  /** The table holding every counter: `'sluice_limits'` (default) or `'schema.table'`, plain identifiers. */
  table?: string;
  /** Create the table and functions on first use when missing (default true); else run `PostgresStore.schema()`. */
  createTable?: boolean;
  /** Milliseconds since the epoch, instead of the database's clock_timestamp(); for tests (a manual clock). */
  clock?: () => number;
}

const OPTION_KEYS = ['client', 'table', 'createTable', 'clock'];
/** Reply fields per policy: allowed (1/0), remaining, resetMs, retryAfterMs (-1: never), delayMs. */
const REPLY_FIELDS = 5;
/** SQLSTATEs of a schema that is not there (yet): undefined_function, undefined_table. */
const MISSING = new Set(['42883', '42P01']);

/** The table option, parsed, or a SluiceConfigError naming it. */
function tableOf(table: unknown, where: string): TableName {
  if (table === undefined) return { schema: undefined, name: DEFAULT_TABLE };
  const parsed = typeof table === 'string' ? parseTable(table) : 'expected a string';
  if (typeof parsed === 'string') {
    throw new SluiceConfigError(ErrorCodes.INVALID_OPTION, where, `${parsed}; got ${describeValue(table)}`);
  }
  return parsed;
}

/** What one policy passes: its key head (up to the subject), algorithm code and numbers. */
interface Plan {
  /** Policies, and so codes (and 3 nums each). */
  readonly size: number;
  /** Elements of the codes' text[] and of the nums' bigint[] (sql-literals.ts). */
  readonly codes: readonly string[];
  readonly nums: readonly string[];
  keys(subject: string): string[];
  marks(subject: string): string[];
  /** Subject-scoped policies' keys, then their marks, and each mark's life. */
  resetKeys(subject: string): string[];
  readonly markLives: number[];
}

const plans = new WeakMap<StoreLimiter, Plan>();

/**
 * Keys are the same as every store's: `${namespace}:${subject}` for a subject-scoped policy (the
 * namespace holds prefix, limiter, policy and algorithm code, escaped; the subject is encoded, and a
 * credential hashed, before it gets here), the bare namespace for a global one.
 */
function planOf(limiter: StoreLimiter): Plan {
  let plan = plans.get(limiter);
  if (plan !== undefined) return plan;
  const { policies } = limiter;
  const keyOf = (namespace: string, global: boolean, subject: string) =>
    global ? namespace : `${namespace}:${subject}`;
  const subjectScoped = policies.filter((p) => p.scope === 'subject');
  plan = {
    size: policies.length,
    codes: textElements(policies.map((p) => p.algorithm.code)),
    nums: bigintElements(policies.flatMap((p) => [p.params.limit, p.params.windowMs, p.params.burst])),
    keys: (subject) => policies.map((p) => keyOf(p.namespace, p.scope === 'global', subject)),
    marks: (subject) => policies.map((p) => keyOf(markOf(p.namespace), p.scope === 'global', subject)),
    resetKeys: (subject) => [
      ...subjectScoped.map((p) => keyOf(p.namespace, false, subject)),
      ...subjectScoped.map((p) => keyOf(markOf(p.namespace), false, subject)),
    ],
    markLives: subjectScoped.map((p) => markLifeMs(p.params)),
  };
  plans.set(limiter, plan);
  return plan;
}

/**
 * A store in PostgreSQL: one function call (call.sql) decides each call of every algorithm and every
 * multi-policy limiter all-or-nothing, in one statement and one round trip, by the database's
 * clock unless a clock is given. The calls of one event-loop turn share that statement (as RedisStore's
 * share a script run), so a burst holds one connection, not one per call. No prepared statement and
 * no session state, so it runs through PgBouncer in transaction mode. Before its first statement it
 * gets ready (readiness.ts: its table and functions checked, created when missing), which the limiter
 * waits for apart from storeTimeout.
 */
export class PostgresStore implements Store {
  readonly local = false;
  readonly clock: (() => number) | undefined;
  private readonly runner: SqlRunner;
  private readonly table: TableName;
  private readonly callName: string;
  /** Whether the table and functions are there (readiness.ts): calls wait for it apart from storeTimeout. */
  private readonly readiness: Readiness;
  /** Calls of this turn, sent together once it ends (or once MAX_BATCH_CALLS of them wait). */
  private queue: Queued[] = [];

  /** The SQL that creates the table and functions for `table`, for migration tools. */
  static schema(options: { table?: string } = {}): string {
    if (typeof options !== 'object' || options === null) {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_OPTION,
        'PostgresStore.schema',
        `expected an options object { table }; got ${describeValue(options)}`,
      );
    }
    for (const key of Object.keys(options)) {
      if (key !== 'table') {
        throw new SluiceConfigError(
          ErrorCodes.UNKNOWN_OPTION,
          `PostgresStore.schema.${key}`,
          'unknown option; expected table',
        );
      }
    }
    return schemaSql(tableOf(options.table, 'PostgresStore.schema.table'));
  }

  constructor(options: PostgresStoreOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_OPTION,
        'PostgresStore',
        `expected an options object { client }; got ${describeValue(options)}`,
      );
    }
    const unknown = Object.keys(options).filter((key) => !OPTION_KEYS.includes(key));
    if (unknown.length > 0) {
      throw new SluiceConfigError(
        ErrorCodes.UNKNOWN_OPTION,
        unknown.map((key) => `PostgresStore.${key}`).join(', '),
        `unknown option${unknown.length > 1 ? 's' : ''}; expected ${OPTION_KEYS.join(', ')}`,
      );
    }
    const { client, table, createTable = true, clock } = options;
    const runner = sqlRunnerFor(client);
    if (runner === undefined) {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_STORE,
        'PostgresStore.client',
        `expected a pg Pool or Client, or a postgres.js instance (postgres(url)); got ${describeValue(client)}`,
      );
    }
    if (typeof createTable !== 'boolean') {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_OPTION,
        'PostgresStore.createTable',
        `expected true or false; got ${describeValue(createTable)}`,
      );
    }
    if (clock !== undefined && typeof clock !== 'function') {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_OPTION,
        'PostgresStore.clock',
        `expected a function; got ${describeValue(clock)}`,
      );
    }
    this.table = tableOf(table, 'PostgresStore.table');
    this.callName = namesOf(this.table).call;
    this.runner = runner;
    this.readiness = new Readiness(runner, this.table, createTable);
    this.clock = clock;
    Object.defineProperty(this, GIVEN_POSTGRES, { value: { client, table: namesOf(this.table).table } });
  }

  /** Undefined once the store found (or created) its table and functions; until then, that attempt. */
  ready(): Promise<void> | undefined {
    return this.readiness.wait();
  }

  async consume(call: StoreCall): Promise<StoreOutcome> {
    const plan = planOf(call.limiter);
    const now = this.clock?.();
    const op = call.mode === 'consume' ? 'c' : 'p';
    const reply = await this.enqueue(op, plan.keys(call.subject), plan, [now, call.cost, call.leaseId]);
    return decode(reply, plan.size, now);
  }

  async refund(call: RefundCall): Promise<void> {
    const plan = planOf(call.limiter);
    const { cost, leaseId, chargedAt } = call.charge;
    const keys = [...plan.keys(call.subject), ...plan.marks(call.subject)];
    await this.enqueue('r', keys, plan, [this.clock?.(), cost, leaseId, chargedAt]);
  }

  async reset(limiter: StoreLimiter, subject: string): Promise<void> {
    const plan = planOf(limiter);
    if (plan.markLives.length === 0) return;
    await this.enqueue('d', plan.resetKeys(subject), undefined, [this.clock?.(), ...plan.markLives]);
  }

  /**
   * Joins the call to this turn's batch; settles with its part of the batch's reply. A key or number
   * no literal can hold fails this call here, alone.
   */
  private enqueue(
    op: Queued['op'],
    keys: string[],
    plan: Plan | undefined,
    args: Array<number | undefined>,
  ): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const queued: Queued = {
        op,
        keys: textElements(keys),
        codes: plan?.codes ?? [],
        nums: plan?.nums ?? [],
        args: bigintElements(args),
        resolve,
        reject,
      };
      const waiting = this.queue.push(queued);
      if (waiting >= MAX_BATCH_CALLS) this.send();
      else if (waiting === 1) soon(this.flush);
    });
  }

  /** The end of the turn: what is queued goes (nothing, when the last batch went as it filled). */
  private readonly flush = (): void => {
    if (this.queue.length > 0) this.send();
  };

  /** Sends the queued calls as one statement; each call gets its reply, or the statement's failure. */
  private send(): void {
    const calls = this.queue;
    this.queue = [];
    this.run(batchSql(this.callName, calls)).then(
      (reply) => settle(calls, reply),
      (error: unknown) => {
        for (const call of calls) call.reject(error);
      },
    );
  }

  /**
   * One statement, once the store is ready (a call made without the limiter's wait). The schema gone
   * since (dropped): checked again, created if need be (within these calls' storeTimeout: a rare
   * event, unlike a start), and the statement run again.
   */
  private async run(text: string): Promise<string | null> {
    const starting = this.readiness.wait();
    if (starting !== undefined) await starting;
    try {
      return await this.runner.run(text);
    } catch (error) {
      if (!MISSING.has((error as { code?: unknown } | undefined)?.code as string)) throw error;
      this.readiness.lost();
      await this.readiness.wait();
      return await this.runner.run(text);
    }
  }
}

/** The call's outcome from the function's reply: `now` is the caller's clock, or undefined to take the database's. */
function decode(reply: string, size: number, now: number | undefined): StoreOutcome {
  const fields = reply.split(',').map(Number);
  if (fields.length !== 1 + REPLY_FIELDS * size || fields.some((f) => !Number.isFinite(f))) {
    throw new Error(
      `sluice: unexpected reply from the PostgresStore function: ${JSON.stringify(reply.slice(0, 200))}`,
    );
  }
  const steps: PolicyOutcome[] = new Array(size);
  for (let i = 0; i < size; i++) {
    const at = 1 + REPLY_FIELDS * i;
    const retryAfterMs = fields[at + 3]!;
    steps[i] = {
      allowed: fields[at] === 1,
      remaining: fields[at + 1]!,
      resetMs: fields[at + 2]!,
      retryAfterMs: retryAfterMs === -1 ? Number.POSITIVE_INFINITY : retryAfterMs,
      delayMs: fields[at + 4]!,
    };
  }
  return { now: now ?? fields[0]!, steps };
}

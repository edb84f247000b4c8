import { ErrorCodes, SluiceConfigError } from '../../errors.js';
import { unref } from '../../portable/runtime.js';
import type { SqlRunner } from './clients/runner.js';
import {
  DEFAULT_TABLE,
  FOREIGN_TABLE_STATE,
  namesOf,
  schemaMark,
  schemaSql,
  TABLE_MARK,
  type TableName,
  tableVerdictSql,
} from './schema.js';

/**
 * How long the calls made before a PostgresStore is ready wait for it: its first connection, the
 * check of its table and functions, and their creation when missing (about 100 ms on an empty
 * database). Apart from storeTimeout, which starts once the store is ready: counted in it, a fresh
 * process's first burst timed out on the setup and was decided by the local fallback, each process
 * its own quota (an attack measured 120 to 180 admitted against a limit of 100). Bounded, so a
 * database that cannot be reached at start costs a call this long at most before onStoreError.
 */
const READY_TIMEOUT_MS = 3000;

/** SQLSTATE insufficient_privilege: the role may not create in the schema. */
const NO_PRIVILEGE = '42501';

/**
 * Whether a PostgresStore's table and functions are there, found once per store before its first
 * statement, and created when missing (createTable). Every call waiting shares one attempt; a failed
 * attempt is made again by the next call the circuit lets through, except the creation itself once
 * the database refused the role the right to it: the error then says how to create them instead, and
 * no later attempt runs the DDL again (only the check, which finds them once a migration made them).
 */
export class Readiness {
  private ready = false;
  private preparing: Promise<void> | undefined;
  /**
   * Why the schema cannot be created by this store (the role's rights), once the database said so.
   * Kept as text: each attempt fails with an Error of its own, since the circuit counts a repeated
   * error object once (a batch's calls share one) and would never open on a role without CREATE.
   */
  private cannotCreate: string | undefined;

  constructor(
    private readonly runner: SqlRunner,
    private readonly table: TableName,
    private readonly createTable: boolean,
  ) {}

  /** Undefined once ready; else the attempt under way, started if there is none. */
  wait(): Promise<void> | undefined {
    if (this.ready) return undefined;
    this.preparing ??= this.attempt();
    return this.preparing;
  }

  /** The schema went missing under a ready store (dropped): the next call checks it again. */
  lost(): void {
    this.ready = false;
  }

  private attempt(): Promise<void> {
    const work = this.prepare().then(() => {
      this.ready = true;
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `sluice: PostgresStore was not ready within ${READY_TIMEOUT_MS} ms (connecting, checking or creating table ${namesOf(this.table).table}); its calls follow onStoreError meanwhile`,
            ),
          ),
        READY_TIMEOUT_MS,
      );
      unref(timer);
    });
    return Promise.race([work, late]).finally(() => {
      clearTimeout(timer);
      this.preparing = undefined;
    });
  }

  private async prepare(): Promise<void> {
    // Not a statement queued where it would wait out READY_TIMEOUT_MS: the calls fail over at once.
    const notReady = this.runner.notReady?.();
    if (notReady !== undefined) throw new Error(`sluice: ${notReady}`);
    const { call } = namesOf(this.table);
    const found = await this.runner.run(
      `SELECT ${tableVerdictSql(this.table)} || ',' || (to_regproc('${call}') IS NOT NULL)::text || ',' ||
        coalesce((SELECT position('${schemaMark(this.table)}' in p.prosrc) > 0 FROM pg_proc p WHERE p.oid = to_regproc('${call}')), false)::text AS r`,
    );
    const [verdict, callable, current] = (found ?? '').split(',');
    if (verdict === 'foreign') throw this.foreign();
    if (verdict === 'sluice' && callable === 'true') {
      // A call function of an earlier build of this schema version (same signature, rows and locks:
      // schema.ts) decides as this one does: it is replaced when this store may create its schema, so
      // that a rolling deploy leaves this build's body, and kept otherwise (a migration's, or a role
      // without CREATE), never failing a store that works.
      if (current === 'true' || !this.createTable || this.cannotCreate !== undefined) return;
      try {
        await this.runner.run(schemaSql(this.table));
      } catch (error) {
        const code = (error as { code?: unknown } | undefined)?.code;
        if (code === NO_PRIVILEGE)
          this.cannotCreate = `sluice: PostgresStore could not replace its functions (${(error as Error).message})`;
      }
      return;
    }
    if (!this.createTable) {
      throw new Error(
        `sluice: the PostgresStore table or functions are missing; create them with the SQL of ${this.schemaCall()} in a migration, or pass createTable: true`,
      );
    }
    if (this.cannotCreate !== undefined) throw new Error(this.cannotCreate);
    try {
      await this.runner.run(schemaSql(this.table));
    } catch (error) {
      const code = (error as { code?: unknown } | undefined)?.code;
      if (code === FOREIGN_TABLE_STATE) throw this.foreign();
      if (code !== NO_PRIVILEGE) throw error;
      this.cannotCreate = `sluice: PostgresStore could not create its table and functions (${(error as Error).message}): create them with the SQL of ${this.schemaCall()}, run by a role that may (a migration), and pass createTable: false; the app's role then needs only SELECT, INSERT, UPDATE and DELETE on the table`;
      throw new Error(this.cannotCreate);
    }
  }

  /** How to call PostgresStore.schema() for this table. */
  private schemaCall(): string {
    const { table } = namesOf(this.table);
    return `PostgresStore.schema(${table === DEFAULT_TABLE ? '' : `{ table: '${table}' }`})`;
  }

  /** The coded error for a table Sluice did not create, saying what to write instead. */
  private foreign(): SluiceConfigError {
    return new SluiceConfigError(
      ErrorCodes.FOREIGN_TABLE,
      'PostgresStore.table',
      `table ${namesOf(this.table).table} exists and Sluice did not create it (no "${TABLE_MARK}" comment, nor the exact shape of a table Sluice created); the store deletes the expired rows of its table, so it takes no table of the app's: give it a table name no table of the app's has (table: '${DEFAULT_TABLE}' is the default)`,
    );
  }
}

import { isPg, type PgQueryable, pgRunner } from './pg.js';
import { isPostgresJs, type PostgresJsSql, postgresJsRunner } from './postgres-js.js';

/** Every PostgreSQL client PostgresStore accepts. */
export type PostgresClient = PgQueryable | PostgresJsSql;

/**
 * What PostgresStore needs of a client, whichever library it comes from: run SQL text in the simple
 * query protocol (no prepared statement, named or unnamed, and so one round trip with postgres.js
 * too), one statement, or several in one transaction; answer the first column of the last row.
 */
export interface SqlRunner {
  /** The value of the first row's one column (`r`), as text. */
  run(text: string): Promise<string | null>;
  /** Why the client cannot run a statement now, or undefined (it can, or may once connected). */
  notReady?(): string | undefined;
}

/** The runner for a client, told apart by its shape (no client library is imported); undefined for anything else. */
export function sqlRunnerFor(client: unknown): SqlRunner | undefined {
  if (isPostgresJs(client)) return postgresJsRunner(client);
  if (isPg(client)) return pgRunner(client);
  return undefined;
}

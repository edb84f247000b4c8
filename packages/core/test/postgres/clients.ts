import type { PostgresClient } from '@sluice/core';
import pg from 'pg';
import postgres from 'postgres';
import { type ServerProcess, startPostgres } from '../../../../test/support/postgres.js';

/**
 * The PostgreSQL clients PostgresStore accepts, for the Postgres suites: every suite that proves a
 * guarantee runs once per client, on the same server. `closeClients()` ends every client made here.
 */
export type PgClientName = 'pg Pool' | 'pg Client' | 'postgres.js';
export const PG_CLIENT_NAMES: readonly PgClientName[] = ['pg Pool', 'pg Client', 'postgres.js'];

const closers: Array<() => Promise<unknown>> = [];

export interface PgClientOptions {
  /** Connections of a pool (pg Pool, postgres.js); default 8. */
  max?: number;
  /** postgres.js: its `prepare` option (default here false; the library's own default is true). */
  prepare?: boolean;
}

/** A connected client of the named kind for `url`. */
export async function makeClient(
  name: PgClientName,
  url: string,
  options: PgClientOptions = {},
): Promise<PostgresClient> {
  const max = options.max ?? 8;
  if (name === 'pg Pool') {
    const pool = new pg.Pool({ connectionString: url, max });
    closers.push(() => pool.end());
    return pool;
  }
  if (name === 'pg Client') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    closers.push(() => client.end());
    return client;
  }
  // Quiet: NOTICEs (CREATE ... IF NOT EXISTS on an existing table) are no news here.
  const sql = postgres(url, { max, onnotice: () => {}, prepare: options.prepare ?? false });
  closers.push(() => sql.end({ timeout: 1 }));
  return sql;
}

export async function closeClients(): Promise<void> {
  const ending = closers.splice(0);
  await Promise.allSettled(ending.map((close) => close()));
}

let unique = 0;
/** A key prefix no other test uses. */
export function uniquePrefix(label: string): string {
  return `${label}-${process.pid}-${++unique}-${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * A server of the test file's own and an admin connection to it, started before its tests and ended
 * after them with every client made here.
 */
export function serverPerFile(): { server: ServerProcess; admin: pg.Client } {
  const handles = {} as { server: ServerProcess; admin: pg.Client };
  beforeAll(async () => {
    handles.server = await startPostgres();
    handles.admin = new pg.Client({ connectionString: handles.server.url });
    await handles.admin.connect();
  }, 60_000);
  afterAll(async () => {
    await handles.admin?.end();
    await closeClients();
    await handles.server?.stop();
  });
  return handles;
}

/**
 * Type tests, checked by `pnpm typecheck`, never run: every client PostgresStore accepts type-checks as
 * `client` without a cast (a pg Pool, a pg Client, a PoolClient, a postgres.js instance), and other
 * values do not.
 */
import { PostgresStore } from '@sluice/core';
import pg from 'pg';
import postgres from 'postgres';

export async function typeTests(): Promise<void> {
  new PostgresStore({ client: new pg.Pool() });
  new PostgresStore({ client: new pg.Client() });
  new PostgresStore({ client: await new pg.Pool().connect() });
  new PostgresStore({ client: postgres() });
  new PostgresStore({ client: postgres({ prepare: false }), table: 'app.limits', createTable: false });
  const schema: string = PostgresStore.schema({ table: 'limits' });
  void schema;
  // @ts-expect-error a URL is not a client
  new PostgresStore({ client: 'postgres://127.0.0.1/app' });
  // @ts-expect-error a query function alone is not a client
  new PostgresStore({ client: { query: async () => ({ rows: [] }) } });
  // @ts-expect-error createTable is a boolean
  new PostgresStore({ client: new pg.Pool(), createTable: 'yes' });
}

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createLimiter, ErrorCodes, PostgresStore } from '@sluice/core';
import pg from 'pg';
import { serverPerFile } from '../../packages/core/test/postgres/clients.js';
import { describePostgres } from '../support/postgres.js';
import { recordWarnings } from '../support/warnings.js';

// A role without CREATE on the schema, createTable left at its default: every failed call's error was
// PostgreSQL's own "permission denied for schema public", with no word of PostgresStore.schema(), and
// each batch the circuit let through ran the whole schema's DDL again. The error now says how to
// create the schema in a migration, and the store never runs the DDL again once the database refused
// it (it still checks, so a migration made afterwards is found). Failed on ae2676c: 6 runs of the DDL
// in 7 waves of calls (expected 1), each failing with PostgreSQL's error alone. Failed on fdd233c: every
// attempt rejected with the one Error object kept, which the circuit counts once (as a batch's shared
// error), so it never opened: 10 checks in 10 waves (expected 5).
describePostgres('a PostgresStore whose role may not create its table', () => {
  const warnings = recordWarnings();
  const db = serverPerFile();

  test('says how to create the table with PostgresStore.schema(), and runs its DDL once', async () => {
    await db.admin.query(
      'CREATE ROLE norights LOGIN; REVOKE CREATE ON SCHEMA public FROM PUBLIC; GRANT USAGE ON SCHEMA public TO norights',
    );
    const pool = new pg.Pool({ connectionString: db.server.url.replace('postgres@', 'norights@'), max: 2 });
    let ddl = 0;
    let checks = 0;
    const query = pool.query.bind(pool);
    pool.query = ((text: string) => {
      if (text.includes('pg_advisory_xact_lock')) ddl++;
      if (text.includes('to_regproc')) checks++;
      return query(text);
    }) as typeof pool.query;
    const errors: string[] = [];
    const listener = (message: unknown) => errors.push((message as { error: string }).error);
    subscribe('sluice:store-error', listener);
    try {
      const store = new PostgresStore({ client: pool, table: 'limits_app' });
      const limiter = createLimiter({
        limit: 5,
        window: '1m',
        store,
        storeTimeout: '2s',
        onStoreError: 'deny',
      });
      const wave = () => Promise.all(Array.from({ length: 10 }, (_, i) => limiter.consume(`u${i}`)));
      // Enough failures to open the circuit, then its probe a second later. Each wave is one attempt
      // until the circuit opens after FAILURES_TO_OPEN (5) of them; then no wave reaches the database.
      for (let i = 0; i < 10; i++) expect((await wave()).every((d) => d.degraded)).toBe(true);
      expect(checks).toBe(5);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await wave()).every((d) => d.degraded)).toBe(true);

      expect(ddl).toBe(1);
      expect(errors[0]).toContain('permission denied for schema public');
      expect(errors[0]).toContain("PostgresStore.schema({ table: 'limits_app' })");
      expect(errors[0]).toContain('createTable: false');

      // A migration creates it: the next probe finds it, with no DDL of the store's.
      await db.admin.query(PostgresStore.schema({ table: 'limits_app' }));
      await db.admin.query('GRANT SELECT, INSERT, UPDATE, DELETE ON limits_app TO norights');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await limiter.consume('after')).degraded).toBeUndefined();
      expect(ddl).toBe(1);
      expect(warnings.codes).toEqual([ErrorCodes.STORE_DEGRADED, ErrorCodes.STORE_RECOVERED]);
    } finally {
      unsubscribe('sluice:store-error', listener);
      await pool.end();
    }
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLimiter, ErrorCodes, PostgresStore } from '@sluice/core';
import { makeClient, serverPerFile, uniquePrefix } from '../../packages/core/test/postgres/clients.js';
import { describePostgres } from '../support/postgres.js';
import { recordWarnings } from '../support/warnings.js';

// `table` naming a table of the app's that happens to have key, state and expires_at columns was
// taken as the store's: the schema's CREATE TABLE IF NOT EXISTS passed it by, functions were created
// over it and the sweep deleted its rows (an attack's table: 'cache' lost all 100 of the app's rows).
// Failed on ae2676c: the calls were decided on the app's table (not degraded) and 0 of its 100 rows
// were left. Sluice now marks the table it creates (a comment) and refuses any other, except the exact
// table releases before the mark created.
const V1_SCHEMA = readFileSync(
  join(__dirname, '../../packages/core/test/postgres/fixtures/schema-v1.sql'),
  'utf8',
);

describePostgres("a PostgresStore whose table option names the app's own table", () => {
  const warnings = recordWarnings();
  const db = serverPerFile();

  test('an app table with key, state and expires_at columns is refused with a coded error; its rows stay', async () => {
    await db.admin.query(`CREATE TABLE cache (key text PRIMARY KEY, state text, expires_at bigint, payload text);
      INSERT INTO cache SELECT 'app-' || g, 'ready', 1000, 'precious' FROM generate_series(1, 100) g`);
    const store = new PostgresStore({
      client: await makeClient('pg Pool', db.server.url, { max: 2 }),
      table: 'cache',
    });
    const limiter = createLimiter({
      prefix: uniquePrefix('foreign'),
      limit: 3,
      window: '1m',
      store,
      storeTimeout: '5s',
      onStoreError: 'deny',
    });

    const decisions = await Promise.all(Array.from({ length: 20 }, (_, i) => limiter.consume(`s${i % 4}`)));

    expect(decisions.map((d) => [d.degraded, d.reason])).toEqual(Array(20).fill([true, 'store-error']));
    const rows = await db.admin.query("SELECT count(*)::int AS n FROM cache WHERE payload = 'precious'");
    expect(rows.rows[0].n).toBe(100);
    const indexes = await db.admin.query("SELECT indexname FROM pg_indexes WHERE tablename = 'cache'");
    expect(indexes.rows.map((r) => r.indexname)).toEqual(['cache_pkey']);
    // Found when the store got ready for its first call, and said again by each later attempt.
    const refusal = await store.ready()?.catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: ErrorCodes.FOREIGN_TABLE, option: 'PostgresStore.table' });
    expect((refusal as Error).message).toContain('table cache exists and Sluice did not create it');
    expect((refusal as Error).message).toContain("table: 'sluice_limits'");
    expect(warnings.codes).toEqual([ErrorCodes.STORE_DEGRADED]);

    // A migration running schema() for it stops as well, creating nothing beside it.
    await expect(db.admin.query(PostgresStore.schema({ table: 'cache' }))).rejects.toMatchObject({
      code: 'SL001',
    });
    const functions = await db.admin.query(
      "SELECT count(*)::int AS n FROM pg_proc WHERE proname LIKE 'cache_%'",
    );
    expect(functions.rows[0].n).toBe(0);
  });

  test('the process warning of the outage names ERR_SLUICE_FOREIGN_TABLE and what to write', async () => {
    // Failed on fdd233c: the only warning (STORE_DEGRADED) said the store "failed or answered later
    // than storeTimeout", and sluice:store-error has no code: the code was nowhere an operator looks.
    await db.admin.query('CREATE TABLE app_cache (key text PRIMARY KEY, state text, expires_at bigint)');
    const store = new PostgresStore({
      client: await makeClient('pg Pool', db.server.url),
      table: 'app_cache',
    });
    const limiter = createLimiter({ limit: 3, window: '1m', store, onStoreError: 'local' });
    expect((await limiter.consume('a')).degraded).toBe(true);
    expect(warnings.codes).toEqual([ErrorCodes.STORE_DEGRADED]);
    expect(warnings.messages[0]).toContain(`(PostgresStore failed with ${ErrorCodes.FOREIGN_TABLE})`);
    expect(warnings.messages[0]).toContain(
      'PostgresStore.table: table app_cache exists and Sluice did not create it',
    );
  });

  test('the table Sluice creates carries its mark; one created before the mark (no comment) is still used', async () => {
    const fresh = new PostgresStore({ client: await makeClient('pg Pool', db.server.url), table: 'marked' });
    const options = { limit: 1, window: '1m', storeTimeout: '30s', onStoreError: 'deny' } as const;
    expect((await createLimiter({ ...options, store: fresh }).consume('a')).degraded).toBeUndefined();
    const mark = await db.admin.query("SELECT obj_description('marked'::regclass, 'pg_class') AS c");
    expect(mark.rows[0].c).toMatch(/^Sluice PostgresStore table/);

    // Schema version 1's SQL, as a release before the mark created sluice_limits: no comment.
    await db.admin.query(V1_SCHEMA);
    const legacy = new PostgresStore({ client: await makeClient('postgres.js', db.server.url) });
    const limiter = createLimiter({ ...options, prefix: uniquePrefix('legacy'), store: legacy });
    expect((await limiter.consume('a')).degraded).toBeUndefined();
    expect((await limiter.consume('a')).allowed).toBe(false);
    await db.admin.query(PostgresStore.schema());
    const unmarked = await db.admin.query(
      "SELECT obj_description('sluice_limits'::regclass, 'pg_class') AS c",
    );
    expect(unmarked.rows[0].c).toBeNull();
    expect(warnings.codes).toEqual([]);
  });

  test('a table created before the mark for a mixed-case table option is still used', async () => {
    // Failed on fdd233c: PostgreSQL folds the unquoted RateLimits to ratelimits, and so its indexes'
    // names, which the check compared as written (RateLimits_pkey): refused as the app's table.
    await db.admin.query(V1_SCHEMA.replace(/sluice_limits/g, 'RateLimits'));
    const store = new PostgresStore({
      client: await makeClient('pg Pool', db.server.url),
      table: 'RateLimits',
    });
    const options = { limit: 1, window: '1m', storeTimeout: '30s', onStoreError: 'deny' } as const;
    const limiter = createLimiter({ ...options, prefix: uniquePrefix('mixed'), store });
    expect((await limiter.consume('a')).degraded).toBeUndefined();
    expect((await limiter.consume('a')).allowed).toBe(false);
    expect(warnings.codes).toEqual([]);
  });
});

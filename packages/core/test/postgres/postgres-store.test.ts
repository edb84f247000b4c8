import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLimiter, ErrorCodes, PostgresStore } from '@sluice/core';
import pg from 'pg';
import postgres from 'postgres';
import { describePostgres } from '../../../../test/support/postgres.js';
import { recordWarnings } from '../../../../test/support/warnings.js';
import { makeClient, PG_CLIENT_NAMES, serverPerFile, uniquePrefix } from './clients.js';

/**
 * PostgresStore's options and what it does with the database: clients told apart by shape, names
 * checked, the schema created on first use (also by many stores at once) or, without createTable, a
 * failure that says what to run; `schema()` for migrations; keys that hold any subject; no session
 * state left on a connection.
 */
describe('PostgresStore options', () => {
  const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
  const sql = postgres('postgres://nobody@127.0.0.1:1/none');
  afterAll(async () => {
    await pool.end();
    await sql.end({ timeout: 0 });
  });

  test.each([
    ['a pg Pool', () => pool],
    ['a pg Client', () => new pg.Client()],
    ['a postgres.js instance', () => sql],
  ])('takes %s', (_label, client) => {
    expect(new PostgresStore({ client: client() }).local).toBe(false);
  });

  test.each([
    ['nothing', undefined],
    ['a plain object', {}],
    ['a query function alone', { query: () => {} }],
    ['a Redis-like client', { evalsha: () => {}, eval: () => {} }],
  ])('refuses %s as client, naming what it takes', (_label, client) => {
    expect(() => new PostgresStore({ client: client as never })).toThrow(
      expect.objectContaining({
        code: ErrorCodes.INVALID_STORE,
        message: expect.stringContaining('expected a pg Pool or Client, or a postgres.js instance'),
      }),
    );
  });

  test.each([
    ['my table'],
    ['a.b.c'],
    ['1limits'],
    ['limits;drop table x'],
    ['"quoted"'],
    ['x'.repeat(60)],
    [''],
  ])('refuses table %j with ERR_SLUICE_INVALID_OPTION', (table) => {
    expect(() => new PostgresStore({ client: pool, table })).toThrow(
      expect.objectContaining({
        code: ErrorCodes.INVALID_OPTION,
        message: expect.stringContaining('PostgresStore.table'),
      }),
    );
    expect(() => PostgresStore.schema({ table })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
  });

  test('names every unknown option at once, and checks createTable and clock', () => {
    expect(() => new PostgresStore({ client: pool, tableName: 'x', ttl: 1 } as never)).toThrow(
      expect.objectContaining({
        code: ErrorCodes.UNKNOWN_OPTION,
        message: expect.stringMatching(
          /PostgresStore\.tableName, PostgresStore\.ttl.*expected client, table, createTable, clock/,
        ),
      }),
    );
    expect(() => new PostgresStore({ client: pool, createTable: 'yes' as never })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
    expect(() => new PostgresStore({ client: pool, clock: 5 as never })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }),
    );
  });

  test('a pg Pool given as the store says to wrap it in PostgresStore', () => {
    expect(() => createLimiter({ limit: 1, window: '1s', store: pool as never })).toThrow(
      expect.objectContaining({
        code: ErrorCodes.INVALID_STORE,
        message: expect.stringContaining('new PostgresStore({ client })'),
      }),
    );
  });

  test('schema() is versioned SQL for the table asked for', () => {
    const text = PostgresStore.schema();
    expect(text).not.toContain('{{');
    expect(text).toContain('CREATE TABLE IF NOT EXISTS sluice_limits (');
    expect(text).toContain('CREATE OR REPLACE FUNCTION sluice_limits_sluice_v2_call(');
    expect(text).toContain('CREATE OR REPLACE FUNCTION sluice_v2_gc_step(');
    const qualified = PostgresStore.schema({ table: 'limits.api' });
    expect(qualified).toContain('CREATE TABLE IF NOT EXISTS limits.api (');
    expect(qualified).toContain('FUNCTION limits.sluice_v2_fw_step(');
    expect(qualified).not.toMatch(/[^.]\bsluice_v2_fw_step\(/);
  });
});

describePostgres('PostgresStore on a server', () => {
  const warnings = recordWarnings();
  const db = serverPerFile();

  const limiterOn = (store: PostgresStore, prefix = uniquePrefix('store')) =>
    createLimiter({ prefix, limit: 2, window: '1h', store, storeTimeout: '30s', onStoreError: 'deny' });

  test('without createTable a missing table is a store failure whose error says what to run', async () => {
    const store = new PostgresStore({
      client: await makeClient('pg Pool', db.server.url),
      table: 'absent',
      createTable: false,
    });
    const errors: string[] = [];
    const { subscribe, unsubscribe } = await import('node:diagnostics_channel');
    const listener = (m: unknown) => errors.push((m as { error: string }).error);
    subscribe('sluice:store-error', listener);
    try {
      const decision = await limiterOn(store).consume('a');
      expect([decision.allowed, decision.degraded, decision.reason]).toEqual([false, true, 'store-error']);
    } finally {
      unsubscribe('sluice:store-error', listener);
    }
    expect(errors.join('\n')).toContain('PostgresStore.schema(');
    expect(warnings.codes).toEqual(['ERR_SLUICE_STORE_DEGRADED']);
    const exists = await db.admin.query("SELECT to_regclass('absent') AS t");
    expect(exists.rows[0].t).toBeNull();
  });

  test('many stores starting at once create the schema once, in a schema of its own, then decide', async () => {
    await db.admin.query('CREATE SCHEMA limits');
    const stores = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const client = await makeClient(PG_CLIENT_NAMES[i % PG_CLIENT_NAMES.length]!, db.server.url, {
          max: 2,
        });
        return new PostgresStore({ client, table: 'limits.api' });
      }),
    );
    const prefix = uniquePrefix('race');
    const decisions = await Promise.all(stores.map((store) => limiterOn(store, prefix).consume('same')));
    expect(decisions.map((d) => d.degraded)).toEqual(Array(6).fill(undefined));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(2);
    const table = await db.admin.query("SELECT to_regclass('limits.api') AS t");
    expect(table.rows[0].t).toBe('limits.api');
  });

  test('a migration runs schema() itself; the store then needs no rights to create anything', async () => {
    await db.admin.query(PostgresStore.schema({ table: 'migrated' }));
    await db.admin.query(
      'CREATE ROLE app LOGIN; GRANT SELECT, INSERT, UPDATE, DELETE ON migrated TO app; REVOKE CREATE ON SCHEMA public FROM PUBLIC',
    );
    const client = await makeClient('postgres.js', db.server.url.replace('postgres@', 'app@'));
    const store = new PostgresStore({ client, table: 'migrated', createTable: false });
    const limiter = limiterOn(store);
    expect((await limiter.consume('a')).allowed).toBe(true);
    expect((await limiter.consume('a')).allowed).toBe(true);
    expect((await limiter.consume('a')).allowed).toBe(false);
  });

  // Renamed: failed on fdd233c: the renamed table kept its index, named renamed_expires_at, so the
  // schema's CREATE INDEX of that name failed (42P07) at every attempt and every call was degraded.
  test.each([
    ['dropped', 'is created again by the call that finds it gone', 'DROP TABLE dropped'],
    [
      'renamed',
      'is made again, with an expiry index of its own',
      'ALTER TABLE renamed RENAME TO renamed_old',
    ],
  ])('a table %s under a running store %s', async (table, _what, ddl) => {
    const store = new PostgresStore({ client: await makeClient('pg Pool', db.server.url), table });
    const limiter = limiterOn(store);
    expect((await limiter.consume('a')).degraded).toBeUndefined();
    await db.admin.query(ddl);
    const again = await limiter.consume('a');
    expect([again.allowed, again.remaining, again.degraded]).toEqual([true, 1, undefined]);
    expect(warnings.codes).toEqual([]);
    const indexes = await db.admin.query(
      "SELECT indexdef FROM pg_indexes WHERE tablename = $1 AND indexdef LIKE '%(expires_at)'",
      [table],
    );
    expect(indexes.rows).toHaveLength(1);
  });

  test('hostile subjects stay in their own keys', async () => {
    const store = new PostgresStore({ client: await makeClient('pg Client', db.server.url) });
    const limiter = limiterOn(store);
    const hostile = [
      "'); DROP TABLE sluice_limits; --",
      '\\',
      '"{}',
      "E'\\''",
      '$$',
      'ü ✓ \u2028',
      'a,b',
      'NULL',
    ];
    for (const subject of hostile) {
      expect((await limiter.consume(subject)).remaining).toBe(1);
    }
    for (const subject of hostile) {
      expect((await limiter.consume(subject)).remaining).toBe(0);
      expect((await limiter.consume(subject)).allowed).toBe(false);
    }
    const keys = (await db.admin.query('SELECT count(*) AS n FROM sluice_limits')).rows[0].n;
    expect(Number(keys)).toBeGreaterThanOrEqual(hostile.length);
  });

  test('leaves no session state: no prepared statement, no setting, no advisory lock on the connection', async () => {
    const client = new pg.Client({ connectionString: db.server.url });
    await client.connect();
    try {
      const store = new PostgresStore({ client });
      const limiter = createLimiter({
        prefix: uniquePrefix('session'),
        policies: [
          { limit: 5, window: '1m', algorithm: 'sliding-log' },
          { limit: 3, window: '1m', algorithm: 'concurrency' },
        ],
        store,
        storeTimeout: '30s',
      });
      const d = await limiter.consume('s');
      await d.release?.();
      await limiter.reset('s');
      const state = await client.query(`SELECT
        (SELECT count(*) FROM pg_prepared_statements) AS prepared,
        (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS locks,
        (SELECT count(*) FROM pg_settings WHERE source = 'session') AS settings,
        (SELECT count(*) FROM pg_class WHERE relpersistence = 't') AS temporary`);
      expect(state.rows[0]).toEqual({ prepared: '0', locks: '0', settings: '0', temporary: '0' });
    } finally {
      await client.end();
    }
  });

  test('versions 1 and 2 install side by side on one table and share its counters', async () => {
    const store = new PostgresStore({ client: await makeClient('pg Pool', db.server.url) });
    const prefix = uniquePrefix('versions');
    expect((await limiterOn(store, prefix).consume('v')).remaining).toBe(1);
    const sources = async (version: number) =>
      (
        await db.admin.query(
          `SELECT string_agg(md5(prosrc), ',' ORDER BY proname) AS s FROM pg_proc WHERE proname LIKE '%sluice_v${version}_%'`,
        )
      ).rows[0].s as string;
    const v2 = await sources(2);
    // A process of the release before (schema version 1) starts during a rolling deploy and creates
    // its own functions, exactly as that release did: ours are left as they are.
    await db.admin.query(readFileSync(join(__dirname, 'fixtures/schema-v1.sql'), 'utf8'));
    expect(await sources(2)).toBe(v2);
    const v1 = await sources(1);
    expect(v1).not.toBe('');
    // Its call function (one call, the old signature) decides on the row version 2 charged...
    const key = (await db.admin.query(`SELECT key FROM sluice_limits WHERE key LIKE '${prefix}:%'`)).rows[0]
      .key as string;
    const reply = await db.admin.query(
      "SELECT sluice_limits_sluice_v1_call('c', ARRAY[$1], '{sw}', '{2,3600000,2}', ARRAY[NULL, 1, 0]::bigint[]) AS r",
      [key],
    );
    expect((reply.rows[0].r as string).split(',').slice(1, 3)).toEqual(['1', '0']);
    // ...and version 2 sees its charge: one table, counters shared.
    expect((await limiterOn(store, prefix).consume('v')).allowed).toBe(false);
    // Version 2's schema run again (a migration, another process) leaves version 1's functions alone.
    await db.admin.query(PostgresStore.schema());
    expect(await sources(1)).toBe(v1);
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLimiter, PostgresStore } from '@sluice/core';
import pg from 'pg';
import { describePostgres } from '../../../../test/support/postgres.js';
import { makeClient, serverPerFile, uniquePrefix } from './clients.js';

/**
 * A rolling deploy: processes of the release before (schema version 1, fixtures/schema-v1.sql, whose
 * SQL is released and cannot change) beside this one's on one database. Failed on ae2676c: a v1 reset
 * and a v2 reset of one subject deadlocked (v1 locks the subject's keys, then its reset marks; v2
 * locked marks and keys in one sort, where a mark comes first), and v2's schema took an advisory lock
 * of its own, so it did not wait for v1's and both created the table at once (23505 in half the runs).
 */
const V1_SCHEMA = readFileSync(join(__dirname, 'fixtures/schema-v1.sql'), 'utf8');
const DROP_ALL = `DO $$ DECLARE r record; BEGIN
    FOR r IN SELECT oid::regprocedure AS p FROM pg_proc WHERE proname LIKE 'sluice%' LOOP
      EXECUTE 'DROP FUNCTION ' || r.p;
    END LOOP;
  END $$;
  DROP TABLE IF EXISTS sluice_limits`;

/** Polls `check` every 20 ms until it holds (true) or `ms` pass (false). */
async function eventually(check: () => Promise<boolean>, ms = 10_000): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; ) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

describePostgres('PostgresStore beside schema version 1 (a rolling deploy)', () => {
  const db = serverPerFile();
  /** Sessions of a test's own, ended after it (before the server stops). */
  const connections: pg.Client[] = [];
  async function connection(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: db.server.url });
    await client.connect();
    connections.push(client);
    return client;
  }
  afterEach(async () => {
    await Promise.all(connections.splice(0).map((c) => c.end()));
  });

  /** Sessions of this server waiting for a lock (a row's, or an advisory one). */
  const waiting = async () =>
    Number(
      (
        await db.admin.query(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = 'postgres'",
        )
      ).rows[0].n,
    );
  const deadlocks = async () => {
    await db.admin.query('SELECT pg_stat_force_next_flush()');
    return Number(
      (await db.admin.query("SELECT deadlocks FROM pg_stat_database WHERE datname = 'postgres'")).rows[0]
        .deadlocks,
    );
  };

  test("version 2's schema waits for version 1's lock: created once, never at the same time", async () => {
    // Deterministic: a session holds the lock version 1's schema takes; version 2's must wait for it.
    await db.admin.query(DROP_ALL);
    const holder = await connection();
    await holder.query("BEGIN; SELECT pg_advisory_xact_lock(hashtext('sluice schema'), 1)");
    let done = false;
    const v2 = (await connection()).query(PostgresStore.schema()).finally(() => {
      done = true;
    });
    expect(await eventually(async () => done || (await waiting()) === 1)).toBe(true);
    expect(done).toBe(false);
    await holder.query('COMMIT');
    await v2;

    // And both at once on an empty database, as two processes starting: never a failure.
    const v1Pool = new pg.Pool({ connectionString: db.server.url, max: 1 });
    const v2Pool = new pg.Pool({ connectionString: db.server.url, max: 1 });
    try {
      const failures: string[] = [];
      for (let run = 0; run < 20; run++) {
        await db.admin.query(DROP_ALL);
        const results = await Promise.allSettled([
          v1Pool.query(V1_SCHEMA),
          v2Pool.query(PostgresStore.schema()),
        ]);
        for (const r of results) if (r.status === 'rejected') failures.push(String(r.reason));
      }
      expect(failures).toEqual([]);
    } finally {
      await v1Pool.end();
      await v2Pool.end();
    }
  });

  test('a version 1 reset and a version 2 reset of one subject wait for each other, never deadlock', async () => {
    await db.admin.query(DROP_ALL);
    await db.admin.query(V1_SCHEMA);
    await db.admin.query(PostgresStore.schema());
    const store = new PostgresStore({ client: await makeClient('pg Pool', db.server.url, { max: 4 }) });
    const resets: unknown[] = [];
    const reset = store.reset.bind(store);
    store.reset = (limiter, subject) =>
      reset(limiter, subject).catch((error: unknown) => {
        resets.push(error);
        throw error;
      });
    const limiter = createLimiter({
      prefix: uniquePrefix('reset'),
      limit: 10,
      window: '1m',
      store,
      storeTimeout: '30s',
      onStoreError: 'deny',
    });
    await limiter.consume('s');
    const key = (
      await db.admin.query('SELECT key FROM sluice_limits WHERE key LIKE $1', [`${limiter.config.prefix}:%`])
    ).rows[0].key as string;
    const mark = key.replace(/:s$/, '#r:s');
    const before = await deadlocks();

    // A third session holds the subject's key, so that both resets queue on it, version 1's first:
    // it then holds the key while it writes the mark, as its SQL does.
    const holder = await connection();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM sluice_limits WHERE key = $1 FOR UPDATE', [key]);
    const v1 = (await connection())
      .query(
        "SELECT sluice_limits_sluice_v1_call('d', ARRAY[$1, $2], '{}', '{}', ARRAY[NULL, 120000]::bigint[])",
        [key, mark],
      )
      .then(
        () => 'done',
        (error: { code?: string }) => `failed: ${error.code}`,
      );
    expect(await eventually(async () => (await waiting()) === 1)).toBe(true);
    const v2 = limiter.reset('s');
    expect(await eventually(async () => (await waiting()) === 2)).toBe(true);
    await holder.query('COMMIT');

    expect(await v1).toBe('done');
    await v2;
    expect(resets).toEqual([]);
    expect((await limiter.peek('s')).remaining).toBe(10);
    expect((await deadlocks()) - before).toBe(0);
  });
});

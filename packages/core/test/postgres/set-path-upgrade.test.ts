import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLimiter, type Limiter, PostgresStore } from '@sluice/core';
import pg from 'pg';
import { describePostgres } from '../../../../test/support/postgres.js';
import { makeClient, serverPerFile, uniquePrefix } from './clients.js';

/**
 * A database whose schema version 2 was made by a build before the set-based path (b0f8c24, the
 * commit before the merge of wt-pgfast; fixtures/schema-v2-before-set-path.sql is that build's
 * PostgresStore.schema()). After a rolling deploy every process is of the new build; the call function
 * should then be the new one. Fails on 1e0ef51: Readiness sees the call function there and never runs
 * the new schema, so the set-based path (and its twins' _rows functions) never reaches a database an
 * older build of version 2 created.
 */
const BEFORE = readFileSync(join(__dirname, 'fixtures/schema-v2-before-set-path.sql'), 'utf8');
const DROP_ALL = `DO $$ DECLARE r record; BEGIN
    FOR r IN SELECT oid::regprocedure AS p FROM pg_proc WHERE proname LIKE 'sluice%' LOOP
      EXECUTE 'DROP FUNCTION ' || r.p;
    END LOOP;
  END $$;
  DROP TABLE IF EXISTS sluice_limits`;

describePostgres('PostgresStore on a schema version 2 made before the set-based path', () => {
  const db = serverPerFile();
  const body = async () =>
    String(
      (
        await db.admin.query(
          "SELECT prosrc FROM pg_proc WHERE oid = to_regproc('sluice_limits_sluice_v2_call')",
        )
      ).rows[0]?.prosrc,
    );

  test('a store of this build (createTable: true) installs its call function', async () => {
    await db.admin.query(DROP_ALL);
    await db.admin.query(BEFORE);
    expect(await body()).not.toContain('set_based');
    const store = new PostgresStore({ client: await makeClient('pg Pool', db.server.url, { max: 2 }) });
    const limiter = createLimiter({
      prefix: uniquePrefix('up'),
      limit: 3,
      window: '1m',
      store,
      storeTimeout: '30s',
      onStoreError: 'deny',
    });
    expect((await limiter.consume('a')).allowed).toBe(true);
    expect(await body()).toContain('set_based');
    const rows = await db.admin.query(
      "SELECT count(*)::int AS n FROM pg_proc WHERE proname LIKE 'sluice_v2_%_rows'",
    );
    expect(rows.rows[0].n).toBe(2);
  });
  test('a role that may not replace the functions keeps the earlier body, and its store works', async () => {
    await db.admin.query(DROP_ALL);
    await db.admin.query(BEFORE);
    await db.admin.query(
      'CREATE ROLE app LOGIN; GRANT SELECT, INSERT, UPDATE, DELETE ON sluice_limits TO app; REVOKE CREATE ON SCHEMA public FROM PUBLIC',
    );
    for (const createTable of [true, false]) {
      const client = await makeClient('postgres.js', db.server.url.replace('postgres@', 'app@'));
      const store = new PostgresStore({ client, createTable });
      const limiter = createLimiter({
        prefix: uniquePrefix('role'),
        limit: 2,
        window: '1m',
        store,
        storeTimeout: '30s',
        onStoreError: 'deny',
      });
      const decisions = [await limiter.consume('a'), await limiter.consume('a'), await limiter.consume('a')];
      expect(decisions.map((d) => [d.allowed, d.degraded])).toEqual([
        [true, undefined],
        [true, undefined],
        [false, undefined],
      ]);
    }
    expect(await body()).not.toContain('set_based');
  });

  test('bodies of both builds swapped under crossing batches: no deadlock, no error, exact limits', async () => {
    const deadlocks = async () => {
      await db.admin.query('SELECT pg_stat_force_next_flush()');
      return Number(
        (await db.admin.query("SELECT deadlocks FROM pg_stat_database WHERE datname = 'postgres'")).rows[0]
          .deadlocks,
      );
    };
    const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: db.server.url, max: 2 }));
    try {
      const prefix = uniquePrefix('mix');
      const ls: Limiter[][] = pools.map((pool) => {
        const store = new PostgresStore({ client: pool });
        return [
          createLimiter({
            prefix,
            name: 'sw',
            store,
            limit: 50,
            window: '1h',
            storeTimeout: '30s',
            onStoreError: 'deny',
          }),
          createLimiter({
            prefix,
            name: 'tb',
            store,
            limit: 40,
            window: '1h',
            algorithm: 'token-bucket',
            storeTimeout: '30s',
            onStoreError: 'deny',
          }),
        ];
      });
      await ls[0]![0]!.peek('warm');
      const before = await deadlocks();
      let swapping = true;
      const swapper = (async () => {
        let n = 0;
        while (swapping) {
          await db.admin.query(n++ % 2 === 0 ? BEFORE : PostgresStore.schema());
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      const subjects = Array.from({ length: 8 }, (_, i) => `s${i}`);
      const allowed = new Map<string, number>();
      const errors: unknown[] = [];
      await Promise.all(
        pools.map(async (_p, w) => {
          for (let round = 0; round < 40; round++) {
            // Each process its subjects in its own order: batches that cross keys.
            const order = w % 2 === 0 ? subjects : [...subjects].reverse();
            const ds = await Promise.all(
              order.flatMap((s) =>
                ls[w]!.map((l) => l.consume(s).then((d) => [`${l.config.name}/${s}`, d] as const)),
              ),
            );
            for (const [k, d] of ds) {
              if (d.degraded) errors.push(d);
              if (d.allowed) allowed.set(k, (allowed.get(k) ?? 0) + 1);
            }
          }
        }),
      );
      swapping = false;
      await swapper;
      expect(errors.length).toBe(0);
      expect(await deadlocks()).toBe(before);
      for (const s of subjects) {
        expect(allowed.get(`sw/${s}`)).toBe(50);
        expect(allowed.get(`tb/${s}`)).toBe(40);
      }
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});

import { createLimiter, PostgresStore } from '@sluice/core';
import { describePostgres } from '../../../../test/support/postgres.js';
import { makeClient, serverPerFile, uniquePrefix } from './clients.js';

/**
 * Expired rows are deleted by the store itself as it works, a bounded batch per consume: a stream of
 * 40,000 short-lived subjects never leaves a backlog of expired rows, with nothing called but consume;
 * and a consume deletes no more than its batch (no full scan). On the database's clock, as in
 * production: what expires is decided there.
 *
 * What the sweep answers for is the expired rows, not the table's size: the rows of the last second
 * are live however well it works, as many as the machine decides in a second (about 4,500 here on a
 * quiet machine; a faster one, or a quieter moment, has more). A bound on the whole table failed for
 * that (10,880 rows of a 10,000 bound, 407aab6 with three Jest workers); the backlog does not depend on
 * the machine's speed. Without the sweep it would be nearly every subject.
 */
const SUBJECTS = 40_000;
/** SWEEP_ROWS in stores/postgres/schema.ts. */
const SWEEP_ROWS = 16;
/** Expired longer ago than this, a row is backlog: the sweep had many calls' time to take it. */
const BACKLOG_AFTER_MS = 1000;

describePostgres('PostgresStore expiry', () => {
  const db = serverPerFile();

  const rows = async () =>
    Number((await db.admin.query('SELECT count(*) AS n FROM sluice_limits')).rows[0].n);
  const backlog = async () =>
    Number(
      (
        await db.admin.query(
          `SELECT count(*) AS n FROM sluice_limits WHERE expires_at < floor(extract(epoch FROM clock_timestamp()) * 1000) - ${BACKLOG_AFTER_MS}`,
        )
      ).rows[0].n,
    );

  test('40,000 short-lived subjects: no backlog of expired rows builds up, by consume alone', async () => {
    const client = await makeClient('pg Pool', db.server.url, { max: 8 });
    const store = new PostgresStore({ client });
    const limiter = createLimiter({
      prefix: uniquePrefix('expiry'),
      limit: 5,
      window: '1s',
      algorithm: 'fixed-window',
      store,
      storeTimeout: '30s',
    });
    // A stream of new subjects, 64 in flight: each leaves a row that matters for at most a second.
    let most = 0;
    for (let i = 0; i < SUBJECTS; i += 64) {
      await Promise.all(Array.from({ length: 64 }, (_, j) => limiter.consume(`s${i + j}`)));
      if (i % 1024 === 0) most = Math.max(most, await backlog());
    }
    expect(most).toBeLessThan(SUBJECTS / 8);
    expect(await backlog()).toBeLessThan(SUBJECTS / 8);
    // The sweep deleted rows: the table holds far fewer than the subjects it saw.
    expect(await rows()).toBeLessThan(SUBJECTS - SUBJECTS / 8);
  }, 120_000);

  test('one consume deletes at most its batch of expired rows', async () => {
    await db.admin.query(
      `INSERT INTO sluice_limits (key, state, expires_at) SELECT 'old-' || i, '{1,1}', 1 FROM generate_series(1, 200) i`,
    );
    const old = async () =>
      Number(
        (await db.admin.query("SELECT count(*) AS n FROM sluice_limits WHERE key LIKE 'old-%'")).rows[0].n,
      );
    const store = new PostgresStore({ client: await makeClient('pg Client', db.server.url) });
    const limiter = createLimiter({
      prefix: uniquePrefix('batch'),
      limit: 10,
      window: '1h',
      store,
      storeTimeout: '30s',
    });
    await limiter.consume('one');
    expect(200 - (await old())).toBeLessThanOrEqual(SWEEP_ROWS);
    expect(200 - (await old())).toBeGreaterThan(0);
    // A peek changes nothing.
    const before = await old();
    await limiter.peek('one');
    expect(await old()).toBe(before);
  });
});

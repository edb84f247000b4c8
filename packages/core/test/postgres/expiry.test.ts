import { createLimiter, PostgresStore } from '@sluice/core';
import { describePostgres } from '../../../../test/support/postgres.js';
import { makeClient, serverPerFile, uniquePrefix } from './clients.js';

/**
 * Expired rows are deleted by the store itself as it works, a bounded batch per consume: a stream of
 * 40,000 short-lived subjects never leaves the table above a quarter of them, with nothing called
 * but consume; and a consume deletes no more than its batch (no full scan). On the database's clock,
 * as in production: what expires is decided there.
 *
 * The table holds the subjects of the last second or so, which are live, however well the sweep
 * works: 40,000 keeps that well under a quarter at the rate batched calls reach (about 4,500 subjects
 * a second here; 20,000 left it at the bound, every row left live).
 */
const SUBJECTS = 40_000;
/** SWEEP_ROWS in stores/postgres/schema.ts. */
const SWEEP_ROWS = 16;

describePostgres('PostgresStore expiry', () => {
  const db = serverPerFile();

  const rows = async () =>
    Number((await db.admin.query('SELECT count(*) AS n FROM sluice_limits')).rows[0].n);

  test('40,000 short-lived subjects: the table levels off below a quarter of them, by consume alone', async () => {
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
      if (i % 1024 === 0) most = Math.max(most, await rows());
    }
    const left = await rows();
    // Without the sweep every subject would still have its row.
    expect(most).toBeLessThan(SUBJECTS / 4);
    expect(left).toBeLessThan(SUBJECTS / 4);
    // The rows that are left are the live ones and a batch or so of expired ones, not a backlog.
    const { n } = (
      await db.admin.query(
        'SELECT count(*) AS n FROM sluice_limits WHERE expires_at < floor(extract(epoch FROM clock_timestamp()) * 1000) - 1000',
      )
    ).rows[0];
    expect(Number(n)).toBeLessThan(SUBJECTS / 8);
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

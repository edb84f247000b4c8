import { createLimiter, type Decision, PostgresStore } from '@sluice/core';
import pg from 'pg';
import { makeClient, serverPerFile, uniquePrefix } from '../../packages/core/test/postgres/clients.js';
import { describePostgres } from '../support/postgres.js';
import { recordWarnings } from '../support/warnings.js';

// PostgresStore's batch function read the database's clock before it waited for its row locks, then
// decided with that time: a batch that waited across a window boundary saw the newer window's state as
// stale (fixed-window) or as the window after its own (sliding-window), and overwrote it, so a subject
// got its limit twice in one window (an attack measured 10 of 5 allowed, fixed-window; 9, sliding-
// window). The clock is now read once the rows are locked. Here a third session holds one row's lock
// across the boundary, by the database's clock, whatever the machine's speed.
describePostgres('a batch that waits for a row lock across a window boundary', () => {
  const warnings = recordWarnings();
  const db = serverPerFile();
  const LIMIT = 5;
  // Long enough that the other process's calls all fall in one window, on a loaded machine too.
  const WINDOW = 4000;

  const dbNow = async (): Promise<number> =>
    Number(
      (await db.admin.query('SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS n'))
        .rows[0].n,
    );
  /** Polls the database's clock until `done` holds for it; returns that time. */
  const until = async (done: (now: number) => boolean): Promise<number> => {
    for (;;) {
      const now = await dbNow();
      if (done(now)) return now;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  test.each(['fixed-window', 'sliding-window'] as const)(
    '%s admits the limit once in the window it decides in',
    async (algorithm) => {
      await db.admin.query(PostgresStore.schema());
      const prefix = uniquePrefix('stale-clock');
      // Two processes: each its own store, so one's batch never waits behind the other's in the client.
      const limiter = async () =>
        createLimiter({
          prefix,
          limit: LIMIT,
          window: `${WINDOW}ms`,
          algorithm,
          store: new PostgresStore({ client: await makeClient('pg Pool', db.server.url, { max: 2 }) }),
          storeTimeout: '60s',
          onStoreError: 'deny',
          denyCacheMs: 0,
        });
      const a = await limiter();
      const b = await limiter();
      await a.peek('warm-up');
      await b.peek('warm-up');
      await a.consume('x');
      const keys = await db.admin.query('SELECT key FROM sluice_limits WHERE starts_with(key, $1)', [prefix]);
      const xKey: string = keys.rows.map((row) => row.key).find((key: string) => key.endsWith(':x'));

      // Early in window k, by the database's clock.
      const k = Math.floor((await until((now) => now % WINDOW < WINDOW / 4)) / WINDOW);
      const holder = new pg.Client({ connectionString: db.server.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM sluice_limits WHERE key = $1 FOR UPDATE', [xKey]);
        // Process A's batch of x and y (one event-loop turn): it waits for x's row, y's not yet locked
        // (':x' sorts before ':y').
        const decided = Promise.all([a.consume('x'), a.consume('y')]);
        const holderPid = (await holder.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
        const waitingSince = await (async () => {
          for (;;) {
            const waiting = await db.admin.query(
              'SELECT 1 FROM pg_locks WHERE NOT granted AND pid <> $1 AND locktype IN ($2, $3)',
              [holderPid, 'transactionid', 'tuple'],
            );
            if (waiting.rowCount !== 0) return dbNow();
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
        })();
        // The batch began in window k: the test sets up the case it means to.
        expect(Math.floor(waitingSince / WINDOW)).toBe(k);

        // Window k+1: process B spends y's quota while A still waits.
        await until((now) => Math.floor(now / WINDOW) > k);
        const first: Decision[] = [];
        for (let i = 0; i < LIMIT + 1; i++) first.push(await b.consume('y'));
        await holder.query('COMMIT');
        const [, aY] = await decided;
        const second: Decision[] = [];
        for (let i = 0; i < LIMIT + 1; i++) second.push(await b.consume('y'));
        // All of it decided in window k+1.
        expect(Math.floor((await dbNow()) / WINDOW)).toBe(k + 1);

        const all = [...first, aY, ...second];
        expect(all.filter((d) => d.degraded === true)).toEqual([]);
        expect(all.filter((d) => d.allowed).length).toBe(LIMIT);
        expect(warnings.codes).toEqual([]);
      } finally {
        await holder.end();
      }
    },
    60_000,
  );
});

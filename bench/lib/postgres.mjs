/**
 * A PostgreSQL server of the suite's own, started as the tests start theirs (scripts/postgres-server.cjs:
 * initdb and postgres as the `postgres` user, a temp dir for data and socket, a free loopback port, fsync
 * off).
 * And Sluice and rate-limiter-flexible on a `pg` Pool, each reduced to `call(subject)`.
 */
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as core from '@sluice/core';
import pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes, RateLimiterUnion } from 'rate-limiter-flexible';
import { freePort } from '../../scripts/free-port.mjs';
import { binDir, initCluster, postgresUser, serverArgs, signalAll } from '../../scripts/postgres-server.cjs';
import { storeCalls } from './common.mjs';

const HOST = '127.0.0.1';

/** A fresh server; `admin` is a pg Client for the statistics views, `pool(max)` a new Pool on it. */
export async function startPostgres(settings = {}) {
  const bin = binDir();
  if (bin === undefined || !existsSync(join(bin, 'initdb'))) {
    throw new Error(
      'PostgreSQL 15+ is not installed; this suite needs it (bash scripts/install-postgres.sh)',
    );
  }
  const user = postgresUser();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-pg-'));
  chownSync(dir, user.uid, user.gid);
  const data = initCluster(bin, dir);
  const port = await freePort();
  const args = serverArgs(data, dir, port, settings);
  const child = spawn(join(bin, 'postgres'), args, { ...user, stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // Ended with this process however it ends (SIGQUIT: immediate shutdown, backends included).
  process.once('exit', () => {
    signalAll(child.pid, 'SIGQUIT');
    rmSync(dir, { recursive: true, force: true });
  });
  const connection = { host: HOST, port, user: 'postgres', database: 'postgres' };
  let admin;
  for (let attempt = 0; ; attempt++) {
    // A client that failed to connect cannot connect again: a new one each attempt.
    admin = new pg.Client(connection);
    try {
      await admin.connect();
      break;
    } catch (error) {
      if (attempt > 600 || child.exitCode !== null) {
        child.kill('SIGKILL');
        throw new Error(`postgres did not start on port ${port}: ${error.message}\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  admin.on('error', () => {});
  const version = (await admin.query('SHOW server_version')).rows[0].server_version;
  return {
    port,
    version,
    admin,
    connection,
    pool: (max) => new pg.Pool({ ...connection, max }),
    async stop() {
      await admin.end().catch(() => {});
      signalAll(child.pid, 'SIGINT');
      await exited;
    },
  };
}

/** The database's deadlock counter; the snapshot is cleared so that a second read in a transaction is fresh. */
export async function deadlocks(admin) {
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const r = await admin.query(`SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()`);
  return Number(r.rows[0].deadlocks);
}

/**
 * Makes one deadlock on purpose (two transactions updating two rows in opposite orders), so that a
 * run can show the counter it reads counts one: a zero read from a counter that never moves proves
 * nothing. Resolves to the counter's change, 1 when it works (after deadlock_timeout, 1 s).
 */
export async function provokedDeadlocks(server) {
  const before = await deadlocks(server.admin);
  await server.admin.query(
    'CREATE TABLE IF NOT EXISTS bench_deadlock (k int PRIMARY KEY); TRUNCATE bench_deadlock',
  );
  await server.admin.query('INSERT INTO bench_deadlock VALUES (1), (2)');
  const [a, b] = [new pg.Client(server.connection), new pg.Client(server.connection)];
  await Promise.all([a.connect(), b.connect()]);
  for (const c of [a, b]) await c.query('BEGIN');
  await a.query('UPDATE bench_deadlock SET k = k WHERE k = 1');
  await b.query('UPDATE bench_deadlock SET k = k WHERE k = 2');
  // One of the two is chosen as the victim (40P01); the other then goes through.
  await Promise.allSettled([
    a.query('UPDATE bench_deadlock SET k = k WHERE k = 2'),
    b.query('UPDATE bench_deadlock SET k = k WHERE k = 1'),
  ]);
  for (const c of [a, b]) await c.query('ROLLBACK');
  // A backend reports its counters when it ends.
  await Promise.all([a.end(), b.end()]);
  await new Promise((r) => setTimeout(r, 500));
  return (await deadlocks(server.admin)) - before;
}

/** A table's rows now, and its live and dead tuples as the statistics last saw them. */
export async function tableRows(admin, table) {
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const count = await admin.query(`SELECT count(*)::int AS n FROM ${table}`);
  const stats = await admin.query(
    'SELECT n_live_tup::int AS live, n_dead_tup::int AS dead FROM pg_stat_user_tables WHERE relname = $1',
    [table],
  );
  return { rows: count.rows[0].n, live: stats.rows[0]?.live ?? 0, dead: stats.rows[0]?.dead ?? 0 };
}

/**
 * Sluice on PostgresStore. `degraded()` counts decisions taken without the database (an error or an
 * answer slower than storeTimeout, 10 s here so that a slow answer is waited for): none is PostgreSQL's.
 */
export function sluiceOnPostgres(client, { name, policies, table, storeTimeout = '10s' }) {
  const limiter = core.createLimiter({
    name,
    policies,
    storeTimeout,
    store: new core.PostgresStore({ client, ...(table && { table }) }),
  });
  return storeCalls(limiter, policies);
}

/** A RateLimiterPostgres whose table is made before it is used. */
async function rlfLimiter(pool, { limit, windowMs, prefix, table }) {
  let limiter;
  await new Promise((resolve, reject) => {
    limiter = new RateLimiterPostgres(
      {
        storeClient: pool,
        storeType: 'pool',
        tableName: table,
        points: limit,
        duration: windowMs / 1000,
        keyPrefix: prefix,
      },
      (error) => (error ? reject(error) : resolve()),
    );
  });
  return limiter;
}

/** Resolves to whether admitted: rate-limiter-flexible rejects a refusal with a RateLimiterRes. */
const admitted = (promise) =>
  promise.then(
    () => true,
    (refusal) => {
      if (refusal instanceof RateLimiterRes || (refusal && !(refusal instanceof Error))) return false;
      throw refusal;
    },
  );

/**
 * rate-limiter-flexible on PostgreSQL (fixed window): one limiter, or with `second` two, consumed
 * together by its RateLimiterUnion (two statements per call, as it has no multi-limiter call).
 */
export async function rateLimiterPostgres(pool, options, second) {
  const first = await rlfLimiter(pool, options);
  if (second === undefined) return { call: (subject) => admitted(first.consume(subject)) };
  const union = new RateLimiterUnion(first, await rlfLimiter(pool, second));
  return { call: (subject) => admitted(union.consume(subject)) };
}

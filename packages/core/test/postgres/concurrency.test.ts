import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLimiter, PostgresStore } from '@sluice/core';
import {
  atomicityCases,
  type Burst,
  type BurstResult,
  checkStoreAtomicity,
  verifyBurst,
} from '@sluice/core/testing';
import pg from 'pg';
import { describePostgres, type ServerProcess, startPostgres } from '../../../../test/support/postgres.js';
import { closeClients, makeClient, PG_CLIENT_NAMES, type PgClientName, uniquePrefix } from './clients.js';
import type { Crossing, CrossingResult } from './crossing.js';

/**
 * Exactness and no deadlock under real concurrency: the kit's atomicity check on each client (four
 * store objects with a pool each), then four processes of eight connections each, two on pg and two
 * on postgres.js, firing at one counter for every algorithm and the kit's two-policy cases; and eight
 * workers' worth of calls crossing shared rows in different policy orders, after which the server
 * counts no deadlock.
 */
const PROCESSES: PgClientName[] = ['pg Pool', 'postgres.js', 'pg Pool', 'postgres.js'];
const CONNECTIONS = 8;

describePostgres('PostgresStore under concurrent processes', () => {
  let server: ServerProcess;
  let children: ChildProcess[] = [];

  function send<T>(child: ChildProcess, message: object): Promise<T> {
    return new Promise((resolve, reject) => {
      const exit = (code: number | null) => reject(new Error(`child exited (${code})`));
      child.once('exit', exit);
      child.once('message', (m: { result: T }) => {
        child.off('exit', exit);
        resolve(m.result);
      });
      child.send(message);
    });
  }

  beforeAll(async () => {
    server = await startPostgres();
    const launcher = join(__dirname, '../../../../test/support/ts-register.cjs');
    children = await Promise.all(
      PROCESSES.map(async (client) => {
        // The crossing limiters share a name on purpose (the same keys in other orders): no warning about it.
        const child = fork(launcher, [join(__dirname, 'burst-child.ts')], {
          stdio: 'inherit',
          execArgv: [...process.execArgv, '--no-warnings'],
        });
        await new Promise<void>((resolve, reject) => {
          child.once('message', () => resolve());
          child.once('exit', (code) => reject(new Error(`child exited (${code})`)));
          child.send({ url: server.url, client, max: CONNECTIONS });
        });
        return child;
      }),
    );
  }, 120_000);

  afterAll(async () => {
    for (const child of children) if (child.connected) child.send({ quit: true });
    await closeClients();
    await server?.stop();
  });

  test.each(PG_CLIENT_NAMES.filter((n) => n !== 'pg Client').map((n) => [n]))(
    '%s: the conformance kit finds every algorithm and pair exact',
    async (name) => {
      const report = await checkStoreAtomicity(
        async () => new PostgresStore({ client: await makeClient(name, server.url, { max: CONNECTIONS }) }),
        { limit: 200, prefix: uniquePrefix('kit') },
      );
      expect(report.allowed).toBe(report.cases * 200);
    },
    120_000,
  );

  test.each(atomicityCases(1000).map((c) => [c.label, c] as const))(
    '%s: exactly the limit is allowed from 4 processes x 8 connections, nothing burned',
    async (_label, testCase) => {
      const burst: Burst = {
        policies: testCase.policies,
        prefix: uniquePrefix('atomic'),
        subject: 'hot',
        calls: 500,
      };
      const results = await Promise.all(children.map((child) => send<BurstResult>(child, { burst })));
      const store = new PostgresStore({ client: await makeClient('pg Pool', server.url, { max: 1 }) });
      const after = await createLimiter({
        policies: [...testCase.policies],
        prefix: burst.prefix,
        store,
        storeTimeout: '30s',
        onStoreError: 'deny',
      }).peek('hot');
      verifyBurst(testCase, results, after);
    },
    120_000,
  );

  test('calls crossing shared rows in different orders never deadlock nor fail', async () => {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    const deadlocks = async () =>
      Number(
        (await admin.query("SELECT deadlocks FROM pg_stat_database WHERE datname = 'postgres'")).rows[0]
          .deadlocks,
      );
    try {
      const before = await deadlocks();
      const crossing: Crossing = { prefix: uniquePrefix('crossing'), durationMs: 5_000, inFlight: 16 };
      const results = await Promise.all(children.map((child) => send<CrossingResult>(child, { crossing })));
      // The statistics collector reports with a delay of its own.
      await admin.query('SELECT pg_stat_force_next_flush()');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const calls = results.reduce((sum, r) => sum + r.calls, 0);
      expect(results.flatMap((r) => r.errors)).toEqual([]);
      expect(results.reduce((sum, r) => sum + r.degraded, 0)).toBe(0);
      // Every call waits for the two global rows: few calls a second, but each one crosses the others.
      expect(calls).toBeGreaterThan(100);
      expect((await deadlocks()) - before).toBe(0);
    } finally {
      await admin.end();
    }
  }, 60_000);

  test('version 1 calls beside version 2 batches, on the same rows in other orders, never deadlock', async () => {
    // A rolling deploy: processes of the release before (schema version 1, one call a statement) and
    // of this one (a batch a statement) on one table. Both lock rows in the same global order.
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    const old = new pg.Pool({ connectionString: server.url, max: CONNECTIONS });
    const deadlocks = async () =>
      Number(
        (await admin.query("SELECT deadlocks FROM pg_stat_database WHERE datname = 'postgres'")).rows[0]
          .deadlocks,
      );
    try {
      await admin.query(readFileSync(join(__dirname, 'fixtures/schema-v1.sql'), 'utf8'));
      const before = await deadlocks();
      const crossing: Crossing = { prefix: uniquePrefix('versions'), durationMs: 4_000, inFlight: 16 };
      let done = false;
      const batches = Promise.all(children.map((child) => send<CrossingResult>(child, { crossing }))).finally(
        () => {
          done = true;
        },
      );
      // The rows the crossing calls use (key: prefix:limiter:policy:code[:subject]), once they exist.
      let keys: string[] = [];
      for (let waited = 0; keys.length < 6 && waited < 3_000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        keys = (
          await admin.query('SELECT key FROM sluice_limits WHERE key LIKE $1', [`${crossing.prefix}:%`])
        ).rows.map((r) => r.key as string);
      }
      expect(keys.length).toBeGreaterThanOrEqual(6);
      const errors: string[] = [];
      let oldCalls = 0;
      const oldWorker = async (w: number) => {
        for (let i = w; !done; i++) {
          // Up to four of the rows, in an order of their own.
          const mine = keys.filter((_, k) => (k + i) % 3 !== 0).slice(0, 4);
          if (i % 2 === 1) mine.reverse();
          const codes = mine.map((k) => k.split(':')[3]!);
          const nums = mine.flatMap(() => [1_000_000, 3_600_000, 1_000_000]);
          try {
            await old.query(
              'SELECT sluice_limits_sluice_v1_call($1, $2, $3, $4, ARRAY[NULL, 1, 0]::bigint[]) AS r',
              ['c', mine, codes, nums],
            );
            oldCalls++;
          } catch (error) {
            errors.push(String(error));
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, w) => oldWorker(w)));
      const results = await batches;
      await admin.query('SELECT pg_stat_force_next_flush()');
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect([...errors, ...results.flatMap((r) => r.errors)]).toEqual([]);
      expect(results.reduce((sum, r) => sum + r.degraded, 0)).toBe(0);
      expect(oldCalls).toBeGreaterThan(20);
      expect((await deadlocks()) - before).toBe(0);
    } finally {
      await old.end();
      await admin.end();
    }
  }, 60_000);
});

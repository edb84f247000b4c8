import { PostgresStore } from '@sluice/core';
import {
  checkStoreAtomicity,
  checkStoreParity,
  multiPolicySets,
  singlePolicySets,
} from '@sluice/core/testing';
import {
  describePostgres,
  pgbouncerMissing,
  type ServerProcess,
  startPgBouncer,
  startPostgres,
} from '../../../../test/support/postgres.js';
import { allowWarnings } from '../../../../test/support/warnings.js';
import { closeClients, makeClient, type PgClientName, uniquePrefix } from './clients.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');

/**
 * Through a real pgbouncer in transaction mode (4 server connections shared by every client
 * connection, no prepared statement tracked): the store creates its schema, decides as MemoryStore
 * does, and stays exact under concurrent calls from pools larger than pgbouncer's, on both clients.
 * postgres.js runs on its defaults here (prepare: true): the store never prepares a statement.
 */
const CLIENTS: PgClientName[] = ['pg Pool', 'postgres.js'];

describePostgres('PostgresStore through pgbouncer (transaction mode)', () => {
  let server: ServerProcess;
  let bouncer: ServerProcess;

  beforeAll(async () => {
    server = await startPostgres();
    bouncer = await startPgBouncer(server, 4);
  }, 60_000);
  afterAll(async () => {
    await closeClients();
    await bouncer?.stop();
    await server?.stop();
  });

  test.each(CLIENTS.map((c) => [c]))(
    '%s: parity with MemoryStore',
    async (name) => {
      const client = await makeClient(name, bouncer.url, { prepare: true });
      const report = await checkStoreParity((clock) => new PostgresStore({ client, clock }), {
        policySets: [singlePolicySets[0]!, multiPolicySets[1]!],
        prefix: uniquePrefix('bouncer-parity'),
        seeds: [1, 2],
      });
      expect(report.denials).toBeGreaterThan(report.traces);
    },
    120_000,
  );

  test.each(CLIENTS.map((c) => [c]))(
    '%s: exact under concurrency, more clients than server connections',
    async (name) => {
      const report = await checkStoreAtomicity(
        async () =>
          new PostgresStore({ client: await makeClient(name, bouncer.url, { max: 8, prepare: true }) }),
        { limit: 100, prefix: uniquePrefix('bouncer-atomic') },
      );
      expect(report.allowed).toBe(report.cases * 100);
    },
    120_000,
  );
}, [pgbouncerMissing]);

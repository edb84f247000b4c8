import { PostgresStore } from '@sluice/core';
import { checkStoreParity } from '@sluice/core/testing';
import { describePostgres, type ServerProcess, startPostgres } from '../../../../test/support/postgres.js';
import { clientsTaking, paritySets, SECONDARY_TRACES } from '../../../../test/support/traces.js';
import { allowWarnings } from '../../../../test/support/warnings.js';
import { closeClients, makeClient, PG_CLIENT_NAMES, uniquePrefix } from './clients.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');
// A trace set takes seconds alone, and several times that beside another busy test worker on 2 cores.
jest.setTimeout(180_000);

/**
 * PostgresStore passes the store conformance kit on every client: the same random traces on a manual
 * clock give identical store answers and decisions on MemoryStore and PostgresStore, so the SQL twins
 * decide as the TypeScript steps (and so as the Lua twins, which the Redis parity suite holds to them).
 * pg Pool takes every set, the kit's 8 traces each; the other clients, which run the same SQL and
 * differ only in how it crosses the wire, the multi-policy sets (every algorithm between them), 4
 * traces (one per pace of the clock) of half the length.
 */
describePostgres('PostgresStore parity with MemoryStore', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await closeClients();
    await server?.stop();
  });

  describe.each(paritySets(true).map((set) => [set.label, set] as const))('%s', (_label, set) => {
    test.each(clientsTaking(set, PG_CLIENT_NAMES, (name) => name === 'pg Pool').map((name) => [name]))(
      '%s: the same answer to every store call, the same decision at every step',
      async (name) => {
        const client = await makeClient(name, server.url);
        const report = await checkStoreParity((clock) => new PostgresStore({ client, clock }), {
          policySets: [set],
          prefix: uniquePrefix('parity'),
          ...(name === 'pg Pool' ? {} : SECONDARY_TRACES),
        });
        expect(report.denials).toBeGreaterThan(report.traces);
        expect(report.refunds).toBeGreaterThanOrEqual(report.traces);
      },
    );
  });
});

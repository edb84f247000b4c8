import { PostgresStore } from '@sluice/core';
import { describePostgres } from '../../../../test/support/postgres.js';
import { clientsTaking, paritySets } from '../../../../test/support/traces.js';
import { allowWarnings } from '../../../../test/support/warnings.js';
import { expectDenyCacheParity } from '../conformance/deny-cache-parity.js';
import { makeClient, type PgClientName, serverPerFile, uniquePrefix } from './clients.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');
// A trace set takes seconds alone, and several times that beside another busy test worker on 2 cores.
jest.setTimeout(180_000);

/** One client of each way PostgresStore talks to PostgreSQL (pg's Pool and Client share one). */
const ONE_PER_ADAPTER: readonly PgClientName[] = ['pg Pool', 'postgres.js'];

/**
 * The deny cache answers only what PostgreSQL would: a limiter on PostgresStore with its deny cache on
 * decides every step of a random trace exactly as one on MemoryStore (expectDenyCacheParity), as on
 * RedisStore; the cache is Sluice's, above the wire, which parity.test.ts crosses with every client:
 * pg Pool on every set, postgres.js on the multi-policy sets (test/support/traces.ts).
 */
describePostgres('PostgresStore with the deny cache decides as MemoryStore', () => {
  const db = serverPerFile();
  const runs = paritySets(true).flatMap((set) =>
    clientsTaking(set, ONE_PER_ADAPTER, (name) => name === 'pg Pool').map(
      (name) => [set.label, name, set] as const,
    ),
  );

  test.each(runs)('%s, %s: the same decision at every step', async (_label, name, set) => {
    const client = await makeClient(name, db.server.url);
    const cacheable = await expectDenyCacheParity(
      [...set.policies],
      (clock) => new PostgresStore({ client, clock }),
      () => uniquePrefix('deny-parity'),
    );
    expect(cacheable).toBeGreaterThan(0);
  });
});

import { type Policy, PostgresStore } from '@sluice/core';
import { multiPolicySets, singlePolicySets } from '@sluice/core/testing';
import { describePostgres } from '../../../../test/support/postgres.js';
import { allowWarnings } from '../../../../test/support/warnings.js';
import { expectDenyCacheParity } from '../conformance/deny-cache-parity.js';
import { makeClient, PG_CLIENT_NAMES, serverPerFile, uniquePrefix } from './clients.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');
// A trace set takes seconds alone, and several times that beside another busy test worker on 2 cores.
jest.setTimeout(180_000);

/**
 * The deny cache answers only what PostgreSQL would: a limiter on PostgresStore with its deny cache on
 * decides every step of a random trace exactly as one on MemoryStore (expectDenyCacheParity), as on
 * RedisStore; pg Pool on every set, the other clients on the multi-policy sets.
 */
describePostgres('PostgresStore with the deny cache decides as MemoryStore', () => {
  const db = serverPerFile();
  const sets = [...singlePolicySets, ...multiPolicySets].map((s) => ({
    label: s.label,
    policies: [...s.policies],
  }));
  const runs: Array<[string, string, Policy[]]> = sets.flatMap(({ label, policies }) =>
    PG_CLIENT_NAMES.filter(
      (name) => name === 'pg Pool' || multiPolicySets.some((m) => m.label === label),
    ).map((name): [string, string, Policy[]] => [label, name, policies]),
  );

  test.each(runs)('%s, %s: the same decision at every step', async (_label, name, policies) => {
    const client = await makeClient(name as (typeof PG_CLIENT_NAMES)[number], db.server.url);
    const cacheable = await expectDenyCacheParity(
      policies,
      (clock) => new PostgresStore({ client, clock }),
      () => uniquePrefix('deny-parity'),
    );
    expect(cacheable).toBeGreaterThan(0);
  });
});

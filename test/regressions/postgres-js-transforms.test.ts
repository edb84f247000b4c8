import { createLimiter, PostgresStore } from '@sluice/core';
import postgres from 'postgres';
import { serverPerFile, uniquePrefix } from '../../packages/core/test/postgres/clients.js';
import { describePostgres } from '../support/postgres.js';
import { recordWarnings } from '../support/warnings.js';

// A postgres.js instance made with a column transform (postgres.camel, postgres.pascal, or a function
// of its own: apps that map snake_case columns) renamed the store's reply column `r`, which the store
// read by name: every call failed with "unexpected reply ... undefined" and was decided by
// onStoreError. The store now reads the reply by position. Failed on ae2676c: the first call of each
// was degraded (for pascal and the upper-casing function; camel leaves `r` as it is).
describePostgres('PostgresStore on a postgres.js instance with a column transform', () => {
  const warnings = recordWarnings();
  const db = serverPerFile();

  test.each([
    ['postgres.camel', postgres.camel],
    ['postgres.pascal', postgres.pascal],
    ['postgres.toPascal (columns only)', postgres.toPascal],
    ['a column function upper-casing names', { column: { from: (name: string) => name.toUpperCase() } }],
  ])('%s: calls are decided by the database', async (_label, transform) => {
    const sql = postgres(db.server.url, { max: 2, transform, onnotice: () => {} });
    try {
      const limiter = createLimiter({
        prefix: uniquePrefix('transform'),
        limit: 2,
        window: '1m',
        store: new PostgresStore({ client: sql }),
        storeTimeout: '30s',
        onStoreError: 'deny',
      });
      const decisions = [];
      for (let i = 0; i < 3; i++) decisions.push(await limiter.consume('s'));
      expect(decisions.map((d) => [d.allowed, d.remaining, d.degraded])).toEqual([
        [true, 1, undefined],
        [true, 0, undefined],
        [false, 0, undefined],
      ]);
      expect(warnings.codes).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});

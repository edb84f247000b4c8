import { createLimiter, ErrorCodes, PostgresStore } from '@sluice/core';
import pg from 'pg';
import { serverPerFile } from '../../packages/core/test/postgres/clients.js';
import { describePostgres } from '../support/postgres.js';
import { recordWarnings } from '../support/warnings.js';

// A pg Client handed to the store without connect() (a Pool connects by itself; a Client does not):
// pg holds every query until connect(), so every call waited out storeTimeout and was decided by
// onStoreError, and nothing said why. The store now says so once (ERR_SLUICE_NOT_CONNECTED) and fails
// such calls over at once. Failed on ae2676c: each wave of calls waited out its 5 s storeTimeout, and
// no ERR_SLUICE_NOT_CONNECTED was emitted.
describePostgres('a PostgresStore on a pg Client never connected', () => {
  const warnings = recordWarnings();
  const db = serverPerFile();

  test('is warned of once, with the fix; calls fail over at once; connecting it brings the store back', async () => {
    const client = new pg.Client({ connectionString: db.server.url });
    try {
      const store = new PostgresStore({ client });
      // A storeTimeout long enough that no loaded machine comes near it, for the wait to show.
      const limiter = createLimiter({ limit: 3, window: '1m', store, storeTimeout: '5s' });
      const another = createLimiter({ name: 'other', limit: 3, window: '1m', store, storeTimeout: '5s' });
      for (let wave = 0; wave < 3; wave++) {
        const started = performance.now();
        const decisions = await Promise.all([limiter.consume('a'), another.consume('b')]);
        expect(decisions.every((d) => d.degraded)).toBe(true);
        // Neither storeTimeout (5 s) waited out, nor the store's wait for readiness (3 s).
        expect(performance.now() - started).toBeLessThan(2500);
      }
      expect(warnings.codes.filter((c) => c === ErrorCodes.NOT_CONNECTED)).toHaveLength(1);
      const message = warnings.messages[warnings.codes.indexOf(ErrorCodes.NOT_CONNECTED)]!;
      expect(message).toContain('await client.connect()');
      expect(message).toContain('pg Pool');

      await client.connect();
      // The circuit (opened by five failed attempts, or not yet) lets a call through within a second.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await limiter.consume('c')).degraded).toBeUndefined();
      expect(warnings.codes.filter((c) => c === ErrorCodes.NOT_CONNECTED)).toHaveLength(1);
    } finally {
      await client.end();
    }
  });

  test('a Client connected before the first call, or connecting then: no warning', async () => {
    const connected = new pg.Client({ connectionString: db.server.url });
    const connecting = new pg.Client({ connectionString: db.server.url });
    await connected.connect();
    const pending = connecting.connect();
    try {
      for (const client of [connected, connecting]) {
        const limiter = createLimiter({
          limit: 3,
          window: '1m',
          store: new PostgresStore({ client }),
          storeTimeout: '30s',
        });
        expect((await limiter.consume('a')).degraded).toBeUndefined();
      }
      expect(warnings.codes).toEqual([]);
    } finally {
      await pending;
      await Promise.all([connected.end(), connecting.end()]);
    }
  });
});

// app-config.mjs's options on a PostgresStore whose pg Pool connects to nobody (port 1), a password in
// its URL, a table of its own.
import { readFileSync } from 'node:fs';
import { PostgresStore } from '@sluice/core';
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: 'postgres://app:pgSECRET@127.0.0.1:1/db',
  connectionTimeoutMillis: 1000,
});

export default {
  ...JSON.parse(readFileSync(new URL('./app-options.json', import.meta.url), 'utf8')),
  store: new PostgresStore({ client: pool, table: 'app_limits' }),
};

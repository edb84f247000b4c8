// The module an operator points `sluice --config` at: the options the app passes its adapter
// (app-options.json, which cli.test.ts builds the app from), on a store of its own.
// ioredis, pg and @sluice/core resolve from packages/core. storeTimeout 10 s: a cluster client's first
// call on a loaded test machine can take longer than the default 250 ms.
import { readFileSync } from 'node:fs';
import { PostgresStore, RedisStore } from '@sluice/core';
import { Cluster, Redis } from 'ioredis';
import pg from 'pg';

const { SLUICE_CLI_TEST_CLUSTER: nodes, SLUICE_CLI_TEST_POSTGRES: postgres } = process.env;
function store() {
  if (postgres) return new PostgresStore({ client: new pg.Pool({ connectionString: postgres, max: 2 }) });
  const client = nodes
    ? new Cluster(nodes.split(',').map((n) => ({ host: n.split(':')[0], port: Number(n.split(':')[1]) })))
    : new Redis(process.env.SLUICE_CLI_TEST_REDIS);
  return new RedisStore({ client });
}

export default {
  ...JSON.parse(readFileSync(new URL('./app-options.json', import.meta.url), 'utf8')),
  store: store(),
  prefix: process.env.SLUICE_CLI_TEST_PREFIX,
};

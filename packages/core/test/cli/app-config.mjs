// The module an operator points `sluice --config` at: the very options the app passes its adapter
// (cli.test.ts builds the app from the same values). ioredis and @sluice/core resolve from packages/core.
import { RedisStore } from '@sluice/core';
import { Cluster, Redis } from 'ioredis';

const nodes = process.env.SLUICE_CLI_TEST_CLUSTER;
const client = nodes
  ? new Cluster(nodes.split(',').map((n) => ({ host: n.split(':')[0], port: Number(n.split(':')[1]) })))
  : new Redis(process.env.SLUICE_CLI_TEST_REDIS);

export default {
  store: new RedisStore({ client }),
  prefix: process.env.SLUICE_CLI_TEST_PREFIX,
  name: 'api',
  subject: ['api-key', 'ip'],
  credentialSecret: 'app-secret',
  policies: [
    { name: 'burst', limit: 3, window: '1m', algorithm: 'token-bucket' },
    { name: 'hourly', limit: 100, window: '1h' },
  ],
  ban: { after: 2, for: '10m' },
};

// app-config.mjs's options on an ioredis Cluster given its startup nodes as URLs (ioredis takes them),
// the password inside one; nobody answers at port 1.
import { readFileSync } from 'node:fs';
import { RedisStore } from '@sluice/core';
import { Cluster } from 'ioredis';

export default {
  ...JSON.parse(readFileSync(new URL('./app-options.json', import.meta.url), 'utf8')),
  storeTimeout: '250ms',
  store: new RedisStore({
    client: new Cluster(['redis://:clusterSECRET@127.0.0.1:1'], { clusterRetryStrategy: () => null }),
  }),
};

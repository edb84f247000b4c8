// app-config.mjs's options on a Redis nobody answers at, with a password: an ioredis client made as
// apps make it (no error listener, reconnecting), for `sluice --config` against a store that is down.
import { readFileSync } from 'node:fs';
import { RedisStore } from '@sluice/core';
import { Redis } from 'ioredis';

export default {
  ...JSON.parse(readFileSync(new URL('./app-options.json', import.meta.url), 'utf8')),
  storeTimeout: '250ms',
  store: new RedisStore({ client: new Redis('redis://ops:hunter2@127.0.0.1:1/2') }),
};

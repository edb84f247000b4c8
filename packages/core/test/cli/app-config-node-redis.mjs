// app-config.mjs's options on a node-redis client whose URL has an '@' in its password; nobody answers.
import { readFileSync } from 'node:fs';
import { RedisStore } from '@sluice/core';
import { createClient } from 'redis';

const client = createClient({ url: 'redis://:p@nrSECRET@127.0.0.1:1', socket: { reconnectStrategy: false } });
client.connect().catch(() => {});

export default {
  ...JSON.parse(readFileSync(new URL('./app-options.json', import.meta.url), 'utf8')),
  storeTimeout: '250ms',
  store: new RedisStore({ client }),
};

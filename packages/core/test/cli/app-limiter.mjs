// A module exporting a limiter that code calls directly (limiter.consume('user-42')): its subjects are
// whatever that code passes, with no kind.
import { createLimiter, RedisStore } from '@sluice/core';
import { Redis } from 'ioredis';

export default createLimiter({
  store: new RedisStore({ client: new Redis(process.env.SLUICE_CLI_TEST_REDIS) }),
  prefix: process.env.SLUICE_CLI_TEST_PREFIX,
  name: 'jobs',
  limit: 5,
  window: '1m',
});

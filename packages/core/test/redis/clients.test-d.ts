/**
 * Type tests, checked by `pnpm typecheck`, never run: every client RedisStore accepts type-checks as
 * `client` without a cast, and other values do not.
 */
import { RedisStore } from '@sluice/core';
import Redis, { Cluster } from 'ioredis';
import Redis6, { Cluster as Cluster6 } from 'ioredis6';
import Valkey, { Cluster as ValkeyCluster } from 'iovalkey';
import { createClient as createClient4, createCluster as createCluster4 } from 'redis4';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import { createClient as createClient6, createCluster as createCluster6 } from 'redis6';

export function typeTests(): void {
  new RedisStore({ client: new Redis() });
  new RedisStore({ client: new Cluster([{ port: 7000 }]) });
  new RedisStore({ client: new Redis6() });
  new RedisStore({ client: new Cluster6([{ port: 7000 }]) });
  new RedisStore({ client: new Valkey() });
  new RedisStore({ client: new ValkeyCluster([{ port: 7000 }]) });
  new RedisStore({ client: createClient4() });
  new RedisStore({ client: createCluster4({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] }) });
  new RedisStore({ client: createClient5() });
  new RedisStore({ client: createCluster5({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] }) });
  new RedisStore({ client: createClient6() });
  new RedisStore({ client: createCluster6({ rootNodes: [{ url: 'redis://127.0.0.1:7000' }] }) });
  // @ts-expect-error a URL is not a client
  new RedisStore({ client: 'redis://127.0.0.1:6379' });
  // @ts-expect-error a client without scripts
  new RedisStore({ client: { get: async () => null } });
}

import { ErrorCodes } from '../../errors.js';
import { clientWarning } from '../client-warning.js';

/** An ioredis or iovalkey client, as far as its offline queue and connection state show. */
interface IoredisClient {
  readonly status: string;
  readonly options: { readonly enableOfflineQueue?: unknown };
}

/** A node-redis client (createClient), likewise. */
interface NodeRedisClient {
  readonly isReady: boolean;
  readonly options: { readonly disableOfflineQueue?: unknown } | undefined;
}

/**
 * `enableOfflineQueue: false` (rate-limiter-flexible's usual setting, and docs/deployment.md's) makes
 * ioredis refuse every call until it is connected, and node-redis's `disableOfflineQueue: true` does
 * the same: the calls an app makes before then are decided by onStoreError (the local fallback by
 * default), not by Redis, and nothing said so. The store does not wait for the connection instead: it
 * cannot tell a connection still opening from a Redis that is down, and this setting is the app's
 * choice to fail at once rather than wait. It says so, once, at its first call on a client that has
 * not connected yet; returns the check, or undefined when the client has an offline queue (or is
 * neither client) and there is nothing to check.
 */
export function offlineQueueCheck(client: unknown): (() => void) | undefined {
  const shaped = client as Partial<IoredisClient> & Partial<NodeRedisClient>;
  if (typeof shaped?.status === 'string' && shaped.options?.enableOfflineQueue === false) {
    const ioredis = shaped as IoredisClient;
    return warnOnce(ioredis, 'enableOfflineQueue: false', 'ioredis', IOREDIS_FIX, () =>
      ioredis.status === 'ready' ? undefined : `status '${ioredis.status}'`,
    );
  }
  if (typeof shaped?.isReady === 'boolean' && shaped.options?.disableOfflineQueue === true) {
    const nodeRedis = shaped as NodeRedisClient;
    return warnOnce(nodeRedis, 'disableOfflineQueue: true', 'node-redis', 'await client.connect()', () =>
      nodeRedis.isReady ? undefined : 'isReady false',
    );
  }
  return undefined;
}

/**
 * ioredis and iovalkey connect by themselves unless made with lazyConnect, and connect() on such a
 * client throws "Redis is already connecting/connected": "await client.connect()" alone crashed the
 * app that followed it (newcomer review 28).
 */
const IOREDIS_FIX =
  "create the client with lazyConnect: true and await client.connect(), or await once(client, 'ready') (node:events)";

/**
 * `fix`: how to have the client connected before serving, in its library's terms. `notReady`: what
 * shows the client is not connected yet, or undefined once it is.
 */
function warnOnce(
  client: object,
  setting: string,
  library: string,
  fix: string,
  notReady: () => string | undefined,
): () => void {
  return clientWarning(client, ErrorCodes.OFFLINE_QUEUE_OFF, () => {
    const state = notReady();
    return state === undefined
      ? undefined
      : `RedisStore: its client has ${setting} and was not connected yet (${state}) at the store's first call: ${library} refuses calls until it is, so the first requests after start are decided by onStoreError (the local fallback by default), not by Redis. Fix: ${fix} before serving, or leave the offline queue at its default (storeTimeout still bounds every call).`;
  });
}

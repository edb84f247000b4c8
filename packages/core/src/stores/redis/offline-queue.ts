import { ErrorCodes } from '../../errors.js';
import { emitWarning } from '../../portable/runtime.js';

/** An ioredis or iovalkey client, as far as its offline queue and connection state show. */
interface QueueingClient {
  readonly status: string;
  readonly options: { readonly enableOfflineQueue?: unknown };
}

/** Clients already warned of: several stores on one client say it once. */
const warned = new WeakSet<object>();

/**
 * `enableOfflineQueue: false` (rate-limiter-flexible's usual setting, and docs/deployment.md's) makes
 * ioredis refuse every call until it is connected: the calls an app makes before then are decided by
 * onStoreError (the local fallback by default), not by Redis, and nothing said so. The store does not
 * wait for the connection instead: it cannot tell a connection still opening from a Redis that is
 * down, and this setting is the app's choice to fail at once rather than wait. It says so, once, at
 * its first call on a client that has not connected yet; returns the check, or undefined when the
 * client has an offline queue (or is no ioredis client) and there is nothing to check.
 */
export function offlineQueueCheck(client: unknown): (() => void) | undefined {
  const queueing = client as Partial<QueueingClient> | null;
  if (typeof queueing?.status !== 'string' || queueing.options?.enableOfflineQueue !== false)
    return undefined;
  const ioredis = queueing as QueueingClient;
  return () => {
    if (ioredis.status === 'ready' || warned.has(ioredis)) return;
    warned.add(ioredis);
    emitWarning(
      `RedisStore: its client has enableOfflineQueue: false and was not connected yet (status '${ioredis.status}') at the store's first call: ioredis refuses calls until it is, so the first requests after start are decided by onStoreError (the local fallback by default), not by Redis. Fix: await client.connect() (or its 'ready' event) before serving, or leave enableOfflineQueue at its default (storeTimeout still bounds every call).`,
      ErrorCodes.OFFLINE_QUEUE_OFF,
    );
  };
}

import type { ErrorCode } from '../errors.js';
import { emitWarning } from '../portable/runtime.js';

/** Clients already warned about: several stores on one client say it once. */
const warned = new WeakSet<object>();

/**
 * A warning about a store's client that is not ready to serve (RedisStore's without an offline queue,
 * PostgresStore's pg Client never connected): `message` says what is wrong with it now, or undefined
 * when nothing is. Called at a store's first call; said once per client, whatever stores share it.
 */
export function clientWarning(
  client: object,
  code: ErrorCode,
  message: () => string | undefined,
): () => void {
  return () => {
    if (warned.has(client)) return;
    const text = message();
    if (text === undefined) return;
    warned.add(client);
    emitWarning(text, code);
  };
}

import type { Store } from '../stores/store.js';

/**
 * The first error the store's own calls threw, for the exit-3 line. The limiter's guard reports a
 * failing store only as a degraded decision; a PostgresStore's (a table of the app's, missing
 * functions) reached the operator as "failed to answer" with no cause. Its `ready` and `consume` are
 * wrapped on this instance, for the command's run only.
 */
export function watchStore(store: Store | undefined): () => Error | undefined {
  let first: Error | undefined;
  if (store === undefined) return () => first;
  const seen = (error: unknown): never => {
    first ??= error instanceof Error ? error : new Error(String(error));
    throw error;
  };
  const { ready, consume } = store;
  if (ready !== undefined) store.ready = () => ready.call(store)?.catch(seen);
  store.consume = (call) => {
    try {
      const outcome = consume.call(store, call);
      return outcome instanceof Promise ? outcome.catch(seen) : outcome;
    } catch (error) {
      return seen(error);
    }
  };
  return () => first;
}

/** An error as the exit-3 line gives it: its code when it has one (ERR_SLUICE_FOREIGN_TABLE, 42883). */
export function causeText(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' || typeof code === 'number' ? `${code}: ${error.message}` : error.message;
}

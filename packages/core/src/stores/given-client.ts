/**
 * The client a store was given, on the store under a registered symbol (not enumerable, not API). Two
 * readers: the limiter, for which limiters on two stores of one client share counters (their keys meet
 * in one Redis), and `sluice --config` (cli/module-store.ts), which quiets the client's error events and
 * names its address. The command's module store comes from the build the app imports (ESM or
 * CommonJS), not the command's, so neither instanceof nor state private to a module reaches it; a
 * registered symbol does.
 */
export const GIVEN_CLIENT = Symbol.for('@sluice/core RedisStore client');
/** PostgresStore's client and table, for the command alone: stores of one pool may hold other tables. */
export const GIVEN_POSTGRES = Symbol.for('@sluice/core PostgresStore client');

/** What a store's counters live in: the client it was given, else the store itself. */
export function countersOf(store: object): object {
  return ((store as Record<symbol, unknown>)[GIVEN_CLIENT] as object | undefined) ?? store;
}

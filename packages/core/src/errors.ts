/** Stable codes carried by every {@link SluiceConfigError}; documented in the README. */
export const ErrorCodes = {
  /** An option that Sluice does not know (a typo, or an option of another library). */
  UNKNOWN_OPTION: 'ERR_SLUICE_UNKNOWN_OPTION',
  /** An option of the wrong type or shape. */
  INVALID_OPTION: 'ERR_SLUICE_INVALID_OPTION',
  /** A duration that is not a positive number of milliseconds or a string such as '15m'. */
  INVALID_DURATION: 'ERR_SLUICE_INVALID_DURATION',
  /** A policy limit, burst or cost that is not a positive integer. */
  INVALID_LIMIT: 'ERR_SLUICE_INVALID_LIMIT',
  /** An algorithm name that is not one of the seven. */
  INVALID_ALGORITHM: 'ERR_SLUICE_INVALID_ALGORITHM',
  /** A policy option that its algorithm does not take (burst on fixed-window, delay off leaky-bucket). */
  INVALID_POLICY: 'ERR_SLUICE_INVALID_POLICY',
  /** No policy at all, or both `policies` and the shorthand. */
  NO_POLICY: 'ERR_SLUICE_NO_POLICY',
  /** Two policies of one limiter with the same name. */
  DUPLICATE_POLICY: 'ERR_SLUICE_DUPLICATE_POLICY',
  /**
   * A store that does not implement the Store interface, a Redis client that lacks what it needs, or a
   * ClusterStore created outside a cluster worker.
   */
  INVALID_STORE: 'ERR_SLUICE_INVALID_STORE',
  /** A constant `cost` larger than the capacity of every policy: no request could ever pass. */
  COST_EXCEEDS_CAPACITY: 'ERR_SLUICE_COST_EXCEEDS_CAPACITY',
  /** A request's `plan` named no plan of `plans`: passed to the framework as an error, per request. */
  UNKNOWN_PLAN: 'ERR_SLUICE_UNKNOWN_PLAN',
  /** `limiter` given together with options that would build a limiter. */
  CONFLICTING_OPTIONS: 'ERR_SLUICE_CONFLICTING_OPTIONS',
  /** A process warning: a limiter started deciding without its store (`onStoreError`). */
  STORE_DEGRADED: 'ERR_SLUICE_STORE_DEGRADED',
  /** A process warning: a limiter that was deciding without its store is back on it. */
  STORE_RECOVERED: 'ERR_SLUICE_STORE_RECOVERED',
  /** A process warning, not an error: two limiters on one store and name with different policies. */
  NAME_REUSE: 'ERR_SLUICE_NAME_REUSE',
  /**
   * A process warning, not an error: a RedisStore's first call found its ioredis client not connected
   * with enableOfflineQueue: false, so the first calls are decided without Redis.
   */
  OFFLINE_QUEUE_OFF: 'ERR_SLUICE_OFFLINE_QUEUE_OFF',
  /**
   * Not thrown at construction: a PostgresStore's `table` names a table Sluice did not create (an
   * app's own), found at the store's first use; the store's calls fail (onStoreError) rather than
   * take it, as its sweep would delete the table's expired rows.
   */
  FOREIGN_TABLE: 'ERR_SLUICE_FOREIGN_TABLE',
  /**
   * A process warning, not an error: a PostgresStore's first call found its pg Client never connected
   * (pg holds every query until connect()), so its calls are decided by onStoreError until it is.
   */
  NOT_CONNECTED: 'ERR_SLUICE_NOT_CONNECTED',
  /** A process warning, not an error: a window written as a bare number under 1,000 (ms): likely seconds. */
  WINDOW_IN_SECONDS: 'ERR_SLUICE_WINDOW_IN_SECONDS',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** Thrown synchronously, at construction, for any option Sluice cannot accept. */
export class SluiceConfigError extends Error {
  override readonly name = 'SluiceConfigError';
  readonly code: ErrorCode;
  /** The option path that was wrong, such as `policies[1].window`. */
  readonly option: string;

  constructor(code: ErrorCode, option: string, message: string) {
    super(`${option}: ${message}`);
    this.code = code;
    this.option = option;
  }
}

/**
 * A string that may be a credential: 16 or more characters with no space, letters and digits mixed
 * (an API key or token given where its header name or a subject source belongs). Config words, units
 * and header names ('15 minutes', 'x-api-key', 'token-bucket') do not look like this.
 */
const CREDENTIAL_LIKE = /^(?=.*\d)(?=.*[A-Za-z])\S{16,}$/;

/** Shows a user-given value in an error message without dumping huge or secret-looking strings. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    const hidden = value.length > 40 || CREDENTIAL_LIKE.test(value);
    return hidden ? `a string of ${value.length} characters` : JSON.stringify(value);
  }
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

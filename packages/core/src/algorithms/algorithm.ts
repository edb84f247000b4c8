/**
 * An algorithm is a value: a pure step over a flat numeric state, and its Lua twin that makes the
 * same decision inside Redis. Stores only run steps; they never know what a state means.
 *
 * Arithmetic is kept in integers wherever a comparison decides (scaled by `limit` or `windowMs`), so
 * the TypeScript step and the Lua twin (both IEEE doubles) agree to the millisecond, and
 * `retryAfterMs` is exact rather than off by a rounding error.
 */
export type AlgorithmName =
  | 'fixed-window'
  | 'sliding-window'
  | 'sliding-log'
  | 'token-bucket'
  | 'leaky-bucket'
  | 'gcra'
  | 'concurrency';

/** A policy's numbers, resolved once from its options. */
export interface PolicyParams {
  readonly limit: number;
  readonly windowMs: number;
  /** Capacity of token-bucket, leaky-bucket and gcra; equal to `limit` for the others. */
  readonly burst: number;
}

/** The stored state of one key: a flat array of numbers whose layout belongs to its algorithm. */
export type State = number[];

/**
 * Where a step writes the state to store, whole: set its length. The store's own array, reused from
 * call to call (a decision allocates no state), so a step's result is read before the next step.
 */
export type NextState = number[];

/**
 * The `next` a store passes to the step of an algorithm that has `record`, on a state it holds, when
 * it will record an allowed call with `record` rather than store `next`: the step writes nothing into
 * it. Frozen, so a step that wrote into it anyway would throw, not corrupt a state.
 */
export const IN_PLACE: NextState = Object.freeze([] as number[]) as NextState;

/**
 * What one algorithm says about one call, before the limiter knows whether every policy agrees. An
 * allowed step has written the state to store, if the whole call is allowed, into its `next`; the
 * stored state is left alone otherwise.
 */
export interface StepResult {
  allowed: boolean;
  remaining: number;
  resetMs: number;
  /** 0 when allowed; Infinity when cost exceeds capacity. */
  retryAfterMs: number;
  /** leaky-bucket: how long the accepted request waits for its slot. */
  delayMs: number;
  /** Absolute ms after which the next state means the same as no state, so a store may forget it. */
  expiresAt: number;
}

/** A charge to give back: the cost charged at `chargedAt`, and the lease id of that call. */
export interface Charge {
  readonly cost: number;
  readonly chargedAt: number;
  readonly leaseId: number;
}

export interface RefundResult {
  next: State | undefined;
  expiresAt: number;
}

export interface Algorithm {
  readonly name: AlgorithmName;
  /** Short code used in store keys and to pick the Lua twin. */
  readonly code: string;
  /**
   * Decides a call of `cost` at `now` on the state held in `slot` from index `at` on (the store's
   * array, read in place: no copy per call). Never mutates `slot`; when allowed, writes the state to
   * store into `next`. A cost of 0 observes: it reports the state as it stands (remaining, resetMs)
   * and records nothing (`next` is left as it was).
   */
  step(
    slot: State | undefined,
    at: number,
    now: number,
    cost: number,
    p: PolicyParams,
    leaseId: number,
    next: NextState,
  ): StepResult;
  /**
   * Present for a state that grows with the limit (sliding-log): records an allowed call of `cost` at
   * `now` in the state held in `slot` from `at` on, in place, in a time that does not grow with the
   * state (storing the step's `next` would copy it whole). Returns the array that holds the state now:
   * `slot`, or, rarely, a larger copy of it (from index 0 on, `at` included) that the store keeps in
   * its place. A store that holds its states as arrays of its own (MemoryStore) calls it, once the
   * whole call is allowed, after a step on that state given `next` IN_PLACE. The state it leaves
   * decides every later call as the one `step` would have written.
   */
  record?(slot: State, at: number, now: number, cost: number, p: PolicyParams): State;
  /** Gives back what a call charged, as far as the algorithm can. Pure. */
  refund(state: State | undefined, now: number, charge: Charge, p: PolicyParams): RefundResult;
  /**
   * The Lua twin: a chunk that registers this algorithm's step and refund under `code`. (Its SQL twin,
   * in the same folder, is PostgresStore's to import: stores/postgres/twins.ts.)
   */
  readonly lua: string;
}

/** Gives `next` the length of the state it is to hold (setting a length that is already right costs a call). */
export function sized(next: NextState, length: number): NextState {
  if (next.length !== length) next.length = length;
  return next;
}

/** Floor division of integers; exact for the magnitudes used here (well below 2^53). */
export function idiv(a: number, b: number): number {
  return Math.floor(a / b);
}

/** Result for a call whose cost can never fit: denied with no finite retry. */
export function tooCostly(remaining: number, resetMs: number, expiresAt: number): StepResult {
  return { allowed: false, remaining, resetMs, retryAfterMs: Infinity, delayMs: 0, expiresAt };
}

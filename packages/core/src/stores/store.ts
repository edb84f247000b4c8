import type { Algorithm, Charge, NextState, PolicyParams, StepResult } from '../algorithms/index.js';

/** What a store needs of one policy to run its step and name its key. */
export interface StorePolicy {
  readonly algorithm: Algorithm;
  readonly params: PolicyParams;
  readonly scope: 'subject' | 'global';
  /** `${prefix}:${limiter}:${policy}:${code}`, names escaped (keys.ts): the same for every limiter that shares counters. */
  readonly namespace: string;
}

/** The limiter a call comes from, as its keys need it. */
export interface StoreLimiter {
  readonly prefix: string;
  /** The limiter's name, escaped. */
  readonly name: string;
  readonly policies: readonly StorePolicy[];
  /**
   * True when any policy of the whole limiter is global-scoped, also on a subset of its policies (the
   * leases a release gives back): a store that shards keys (Redis Cluster) keeps every key of such a
   * limiter with its global keys. When absent, stores look at `policies`.
   */
  readonly hasGlobalPolicy?: boolean;
}

/** One call of a limiter: every policy, decided together. */
export interface StoreCall {
  readonly limiter: StoreLimiter;
  /** The subject, encoded (keys.ts); global-scoped policies ignore it. */
  readonly subject: string;
  /** A positive integer. */
  readonly cost: number;
  /** Identifies a concurrency lease taken by this call (0 when no policy takes leases). */
  readonly leaseId: number;
  /** 'consume' charges every policy if all allow, none otherwise; 'peek' charges nothing. */
  readonly mode: 'consume' | 'peek';
}

/** One policy's verdict as a store reports it. */
export type PolicyOutcome = Pick<
  StepResult,
  'allowed' | 'remaining' | 'resetMs' | 'retryAfterMs' | 'delayMs'
>;

export interface StoreOutcome {
  /** The store's clock when it decided, in ms (Redis TIME for the Redis store). */
  readonly now: number;
  /**
   * One per policy. When the call was not charged (denied or peek), the policies that would have
   * allowed report their state as it stands, not as it would be after the call.
   */
  readonly steps: readonly PolicyOutcome[];
}

export interface RefundCall {
  readonly limiter: StoreLimiter;
  readonly subject: string;
  readonly charge: Charge;
}

/**
 * A store runs algorithm steps over keys, all-or-nothing per call. It holds no algorithm logic.
 * A store that answers in process returns plain values, so a decision costs no promise.
 */
export interface Store {
  /** True for stores that decide in process and cannot fail (no timeout or fallback needed). */
  readonly local: boolean;
  /**
   * The clock the store decides by, when it reads one in process (an injected clock, the memory
   * store's). The limiter times its deny cache, circuit breaker and local fallback by it, so a manual
   * clock moves them all; without one they use the process's clock.
   */
  readonly clock?: () => number;
  /**
   * For a store that connects and prepares itself before it can answer (PostgresStore: a connection,
   * its table and functions): a promise that settles once it is ready, rejecting with why it is not
   * (within a bound of the store's own; the limiter waits 5 s at most), or undefined once it is. A
   * throw is the store failing, as a rejection is. Calls wait for it before their
   * `storeTimeout` starts: a cold start's setup is not the store being slow, and counting it made a
   * fresh process's first burst time out and be decided by the local fallback.
   */
  ready?(): Promise<void> | undefined;
  /**
   * For a store that may write a turn's calls later than the end of that turn (RedisStore on
   * node-redis: a turn's later batches go a turn after its first): runs `task` once the calls made so
   * far are written. The limiter starts their storeTimeout then, so the process's own busy time before
   * the write is not counted as the store's. Without it, a call's time starts when its turn is over.
   */
  afterSent?(task: () => void): void;
  consume(call: StoreCall): StoreOutcome | Promise<StoreOutcome>;
  refund(call: RefundCall): void | Promise<void>;
  /** Forgets the subject under every subject-scoped policy of the limiter. */
  reset(limiter: StoreLimiter, subject: string): void | Promise<void>;
}

/**
 * The namespace of a policy's reset marks: when each subject was last reset, so that a refund gives
 * nothing back of a charge made before it (the reset took that charge already), whichever process or
 * limiter object reset it. Never a policy's own namespace: those end with an algorithm code.
 */
export function markOf(namespace: string): string {
  return `${namespace}#r`;
}

/**
 * Whether a refund under `policy` reads reset marks: subject-scoped rate policies. Global keys are not
 * reset; a concurrency lease is given back by its id, which a reset has already dropped, so a release
 * after a reset frees nothing it should not (and a mark must not stop a lease taken after it).
 */
export function marksApply(policy: StorePolicy): boolean {
  return policy.scope === 'subject' && policy.algorithm.name !== 'concurrency';
}

/**
 * How long a reset mark must live: as long as a charge made before the reset could still give
 * anything back (two windows for a sliding window, a full bucket's refill for the buckets).
 */
export function markLifeMs({ limit, windowMs, burst }: PolicyParams): number {
  return Math.max(2 * windowMs, Math.ceil((burst * windowMs) / limit));
}

/**
 * Decides one call over states already read, each held in its slot from index `at` on: the shared
 * all-or-nothing rule that every store applies (the Redis store applies the same rule in Lua). Returns
 * the outcomes, and whether to commit the states the steps wrote into `nexts` (one per policy).
 */
export function decideAll(
  call: StoreCall,
  slots: ReadonlyArray<number[] | undefined>,
  at: number,
  now: number,
  nexts: readonly NextState[],
): { steps: PolicyOutcome[]; results: StepResult[]; commit: boolean } {
  const { cost, leaseId } = call;
  const { policies } = call.limiter;
  const results: StepResult[] = new Array(policies.length);
  let allowed = true;
  for (let i = 0; i < policies.length; i++) {
    const { algorithm, params } = policies[i]!;
    const result = algorithm.step(slots[i], at, now, cost, params, leaseId, nexts[i]!);
    results[i] = result;
    if (!result.allowed) allowed = false;
  }
  const commit = allowed && call.mode === 'consume';
  if (commit) return { steps: results, results, commit };
  // Nothing is charged: a policy that would have allowed reports its state as it stands.
  const steps: PolicyOutcome[] = results.slice();
  for (let i = 0; i < policies.length; i++) {
    if (results[i]!.allowed) steps[i] = standing(policies[i]!, slots[i], at, now, leaseId, nexts[i]!);
  }
  return { steps, results, commit };
}

/** The outcome of a policy that would allow a call that is not charged: its state as it stands. */
export function standing(
  { algorithm, params }: StorePolicy,
  slot: number[] | undefined,
  at: number,
  now: number,
  leaseId: number,
  next: NextState,
): PolicyOutcome {
  // A cost of 0 writes nothing into `next`.
  const seen = algorithm.step(slot, at, now, 0, params, leaseId, next);
  return {
    allowed: true,
    remaining: seen.remaining,
    resetMs: seen.resetMs,
    retryAfterMs: 0,
    delayMs: seen.delayMs,
  };
}

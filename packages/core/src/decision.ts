import type { AlgorithmName } from './algorithms/index.js';
import type { PolicyOutcome } from './stores/store.js';

/** One policy's view of a call. */
export interface PolicyState {
  name: string;
  algorithm: AlgorithmName;
  limit: number;
  windowMs: number;
  remaining: number;
  resetMs: number;
  allowed: boolean;
}

/** The answer to one call: plain data, never a rejected promise for a normal outcome. */
export interface Decision {
  allowed: boolean;
  /** Of the binding policy. */
  limit: number;
  /** Of the binding policy, after this call. */
  remaining: number;
  /** Until the binding policy is back to full quota. */
  resetMs: number;
  /** 0 when allowed; else until the same cost would be allowed; Infinity when it never would. */
  retryAfterMs: number;
  /** The binding policy: when denied the one that denies longest, when allowed the one with least remaining. */
  policy: string;
  policies: PolicyState[];
  /** On refusals: a policy's limit, the store failing (onStoreError 'deny'), and from the HTTP layer a ban or the deny list. */
  reason?: 'limit' | 'store-error' | 'ban' | 'deny-list';
  delayMs?: number;
  release?: () => Promise<void>;
  refund?: () => Promise<void>;
  degraded?: boolean;
}

/** What the limiter knows of a policy when it reports on it. */
export interface PolicyInfo {
  readonly name: string;
  readonly algorithm: AlgorithmName;
  readonly limit: number;
  readonly windowMs: number;
  /** leaky-bucket with delay: the adapters hold an accepted request for its delayMs. */
  readonly delay: boolean;
}

/**
 * Builds the decision from per-policy outcomes. The binding policy is the denying one with the longest
 * retry, or, when allowed, the one with the least remaining (ties: the first).
 */
export function buildDecision(
  policies: readonly PolicyInfo[],
  steps: readonly PolicyOutcome[],
  refund?: Decision['refund'],
): Decision {
  // One pass and no callbacks: this runs on every call.
  let allowed = true;
  let binding = 0;
  let delayed = false;
  let delayMs = 0;
  const states: PolicyState[] = new Array(policies.length);
  for (let i = 0; i < steps.length; i++) {
    const p = policies[i]!;
    const step = steps[i]!;
    states[i] = stateOf(p, step);
    if (p.delay) {
      delayed = true;
      if (step.delayMs > delayMs) delayMs = step.delayMs;
    }
    const best = steps[binding]!;
    if (!step.allowed) {
      if (allowed || step.retryAfterMs > best.retryAfterMs) binding = i;
      allowed = false;
    } else if (allowed && step.remaining < best.remaining) binding = i;
  }
  return decisionOf(
    allowed,
    policies[binding]!,
    steps[binding]!,
    states,
    delayed ? delayMs : undefined,
    refund,
  );
}

/** The decision of a single-policy limiter: buildDecision without its loop. */
export function buildOneDecision(
  policy: PolicyInfo,
  step: PolicyOutcome,
  refund?: Decision['refund'],
): Decision {
  const delayMs = policy.delay ? step.delayMs : undefined;
  return decisionOf(step.allowed, policy, step, [stateOf(policy, step)], delayMs, refund);
}

/**
 * The decision bound by `policy` (its outcome `chosen`); `delayMs` when a policy delays; `refund` for
 * a call that charged. Each outcome is one literal that holds its fields from the start: a field set
 * afterwards costs the object a map transition, or a slower store, on every call.
 */
function decisionOf(
  allowed: boolean,
  policy: PolicyInfo,
  chosen: PolicyOutcome,
  states: PolicyState[],
  delayMs: number | undefined,
  refund: Decision['refund'],
): Decision {
  if (!allowed) return deniedOf(policy, chosen, states);
  const decision: Decision = {
    allowed,
    limit: policy.limit,
    remaining: chosen.remaining,
    resetMs: chosen.resetMs,
    retryAfterMs: 0,
    policy: policy.name,
    policies: states,
    refund,
  };
  if (delayMs !== undefined) decision.delayMs = delayMs;
  return decision;
}

/** A decision denied by `policy`: apart from decisionOf, which an allowed call runs, to keep that small. */
function deniedOf(policy: PolicyInfo, chosen: PolicyOutcome, states: PolicyState[]): Decision {
  return {
    allowed: false,
    limit: policy.limit,
    remaining: chosen.remaining,
    resetMs: deniedResetMs(policy, chosen),
    retryAfterMs: chosen.retryAfterMs,
    policy: policy.name,
    policies: states,
    reason: 'limit',
  };
}

function stateOf(p: PolicyInfo, step: PolicyOutcome): PolicyState {
  return {
    name: p.name,
    algorithm: p.algorithm,
    limit: p.limit,
    windowMs: p.windowMs,
    remaining: step.remaining,
    resetMs: step.allowed ? step.resetMs : deniedResetMs(p, step),
    allowed: step.allowed,
  };
}

/**
 * A denying policy's resetMs: at least its retry time (API.md r2), so a client that waits for the
 * RateLimit `t` is never refused again for the same reason (a sliding window's current window can end
 * before the previous one's weight has decayed enough to admit the call). A concurrency policy's stays
 * 0: it has no reset, and advertises no `t`.
 */
function deniedResetMs(policy: PolicyInfo, { resetMs, retryAfterMs }: PolicyOutcome): number {
  if (policy.algorithm === 'concurrency') return resetMs;
  return retryAfterMs > resetMs && retryAfterMs < Number.POSITIVE_INFINITY ? retryAfterMs : resetMs;
}

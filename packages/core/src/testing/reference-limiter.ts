import type { PolicyState } from '../decision.js';
import { type LimiterOptions, type PolicyConfig, parseLimiterOptions } from '../options.js';
import {
  type ReferenceModel,
  type ReferenceStep,
  referenceModel,
  referenceStep,
} from './reference-models.js';
import type { TraceDecision, TraceOptions, TraceResult, TraceStep } from './trace.js';

interface Charged {
  chargedAt: number;
  cost: number;
  leaseId: number;
  refunded: boolean;
  released: boolean;
}

/**
 * What a limiter with these policies must answer to `trace`, computed from the reference models and
 * the contract's multi-policy rules alone (no store, no step, no decision.ts): all-or-nothing charging,
 * the binding policy (denied: the longest retry; allowed: the least remaining; ties: the first),
 * global scope shared by every subject, reset of subject-scoped policies only.
 */
export function referenceTrace(
  options: Omit<LimiterOptions, 'store'>,
  trace: readonly TraceStep[],
  traceOptions: TraceOptions = {},
): TraceResult[] {
  const { policies } = parseLimiterOptions(options);
  const models = new Map<string, ReferenceModel>();
  const keyOf = (i: number, subject: string) => `${i}\u0000${policies[i]!.scope === 'global' ? '' : subject}`;
  const modelOf = (i: number, subject: string) => {
    const key = keyOf(i, subject);
    let model = models.get(key);
    if (model === undefined) {
      const p = policies[i]!;
      model = referenceModel(p.algorithm, p.params);
      models.set(key, model);
    }
    return model;
  };
  const charges: Array<(Charged & { subject: string }) | undefined> = [];
  /** When each policy's key of a subject was last reset. */
  const resets = new Map<string, number>();
  const results: TraceResult[] = [];
  let now = traceOptions.start ?? 1_700_000_000_000;
  trace.forEach((step, index) => {
    now += step.advanceMs;
    let result: TraceResult = null;
    let charged: (Charged & { subject: string }) | undefined;
    if (step.op === 'consume' || step.op === 'peek') {
      const cost = step.cost ?? 1;
      const leaseId = index + 1;
      const all = policies.every((_, i) => {
        const model = modelOf(i, step.subject);
        return cost <= model.capacity && model.allows(now, cost);
      });
      const commit = all && step.op === 'consume';
      const steps = policies.map((_, i) =>
        referenceStep(modelOf(i, step.subject), now, cost, commit, leaseId),
      );
      result = decisionOf(policies, steps);
      if (commit)
        charged = { subject: step.subject, chargedAt: now, cost, leaseId, refunded: false, released: false };
    } else if (step.op === 'reset') {
      policies.forEach((p, i) => {
        if (p.scope !== 'subject') return;
        models.delete(keyOf(i, step.subject));
        // The reset took the subject's charges under this policy: giving one back later gives nothing.
        // Times are in ms: a charge in the reset's own millisecond counts as taken, made after or not.
        resets.set(keyOf(i, step.subject), now);
      });
    } else {
      const charge = charges[step.of];
      const flag = step.op === 'refund' ? 'refunded' : 'released';
      const leasing = policies.some((p) => p.algorithm === 'concurrency');
      if (charge !== undefined && !charge[flag] && (step.op === 'refund' || leasing)) {
        charge[flag] = true;
        policies.forEach((p, i) => {
          if (step.op !== 'refund' && p.algorithm !== 'concurrency') return;
          // A lease goes back by its id (a reset dropped it already); a rate charge a reset took, not at all.
          const resetAt = p.algorithm === 'concurrency' ? undefined : resets.get(keyOf(i, charge.subject));
          if (resetAt !== undefined && resetAt >= charge.chargedAt) return;
          modelOf(i, charge.subject).refund(now, charge.chargedAt, charge.cost, charge.leaseId);
        });
      }
    }
    charges.push(charged);
    results.push(result);
  });
  return results;
}

function decisionOf(policies: readonly PolicyConfig[], steps: readonly ReferenceStep[]): TraceDecision {
  const allowed = steps.every((s) => s.allowed);
  let binding = allowed ? 0 : steps.findIndex((s) => !s.allowed);
  steps.forEach((s, i) => {
    const best = steps[binding]!;
    if (allowed ? s.remaining < best.remaining : !s.allowed && s.retryAfterMs > best.retryAfterMs)
      binding = i;
  });
  const chosen = steps[binding]!;
  const states: PolicyState[] = policies.map((p, i) => ({
    name: p.name,
    algorithm: p.algorithm,
    limit: p.limit,
    windowMs: p.windowMs,
    remaining: steps[i]!.remaining,
    resetMs: steps[i]!.allowed ? steps[i]!.resetMs : atLeastRetry(p, steps[i]!),
    allowed: steps[i]!.allowed,
  }));
  const decision: TraceDecision = {
    allowed,
    limit: policies[binding]!.limit,
    remaining: chosen.remaining,
    resetMs: allowed ? chosen.resetMs : atLeastRetry(policies[binding]!, chosen),
    retryAfterMs: allowed ? 0 : chosen.retryAfterMs,
    policy: policies[binding]!.name,
    policies: states,
  };
  if (!allowed) decision.reason = 'limit';
  else if (policies.some((p) => p.delay)) {
    decision.delayMs = Math.max(0, ...policies.map((p, i) => (p.delay ? steps[i]!.delayMs : 0)));
  }
  return decision;
}

/** API.md r2: a denying policy's resetMs is at least its (finite) retry time; concurrency has none. */
function atLeastRetry(policy: PolicyConfig, { resetMs, retryAfterMs }: ReferenceStep): number {
  if (policy.algorithm === 'concurrency' || !Number.isFinite(retryAfterMs)) return resetMs;
  return Math.max(resetMs, retryAfterMs);
}

import type { AlgorithmName, Policy } from '@sluice/core';
import type { TraceResult, TraceStep } from '@sluice/core/testing';

/**
 * What each algorithm promises never to exceed, checked on the calls a limiter admitted. These are
 * bounds stated from the contract, not models of the algorithms: they cannot say a call should have
 * been allowed, only that an admitted one broke the promise. That makes them a check independent of
 * the reference models the core's own property tests use.
 */
interface Admitted {
  at: number;
  cost: number;
  /** Concurrency: the step at which the lease was released, if it was. */
  releasedAt?: number;
}

interface Bound {
  limit: number;
  windowMs: number;
  burst: number;
}

function sum(calls: readonly Admitted[], keep: (c: Admitted) => boolean): number {
  let total = 0;
  for (const c of calls) if (keep(c)) total += c.cost;
  return total;
}

/**
 * Why admitting `cost` at `at`, after `before` were admitted on the same counter, breaks the promise
 * of `algorithm`; undefined when it keeps it.
 */
export function breach(
  algorithm: AlgorithmName,
  { limit, windowMs: w, burst }: Bound,
  before: readonly Admitted[],
  at: number,
  cost: number,
): string | undefined {
  const index = (t: number) => Math.floor(t / w);
  switch (algorithm) {
    case 'fixed-window': {
      const used = sum(before, (c) => index(c.at) === index(at));
      return used + cost > limit ? `${used} + ${cost} in the window of ${at} > ${limit}` : undefined;
    }
    case 'sliding-window': {
      // API.md: allowed iff prev * (window - elapsed) / window + curr + cost <= limit (times the window here).
      const k = index(at);
      const curr = sum(before, (c) => index(c.at) === k);
      const prev = sum(before, (c) => index(c.at) === k - 1);
      const scaled = prev * (w - (at - k * w)) + (curr + cost) * w;
      return scaled > limit * w
        ? `estimate ${scaled / w} > ${limit} (prev ${prev}, curr ${curr})`
        : undefined;
    }
    case 'sliding-log': {
      const used = sum(before, (c) => c.at > at - w);
      return used + cost > limit ? `${used} + ${cost} in (${at - w}, ${at}] > ${limit}` : undefined;
    }
    case 'token-bucket':
    case 'leaky-bucket':
    case 'gcra': {
      // A bucket of `burst` refilled at limit per window: over any [s, at], at most burst + (at - s) * limit / w.
      for (const start of before) {
        if (start.at > at) continue;
        const used = sum(before, (c) => c.at >= start.at) + cost;
        if (used * w > burst * w + (at - start.at) * limit) {
          return `${used} in [${start.at}, ${at}] > ${burst} + ${at - start.at} ms of refill at ${limit}/${w} ms`;
        }
      }
      return cost > burst ? `cost ${cost} > burst ${burst}` : undefined;
    }
    case 'concurrency': {
      const held = sum(before, (c) => c.at + w > at && c.releasedAt === undefined);
      return held + cost > limit ? `${held} held + ${cost} > ${limit}` : undefined;
    }
  }
}

/**
 * Walks a trace and its results (runTrace) and returns the first admitted call that breaks a policy's
 * promise, as a message; undefined when every admitted call kept every policy's promise. Steps other
 * than consume, peek and release are not expected here (a refund or reset legitimately gives quota back).
 */
export function firstBreach(
  policies: readonly Policy[],
  trace: readonly TraceStep[],
  results: readonly TraceResult[],
  start: number,
): string | undefined {
  const counters = new Map<string, Admitted[]>();
  const admittedBy: Array<Array<Admitted> | undefined> = [];
  let now = start;
  for (let i = 0; i < trace.length; i++) {
    const step = trace[i]!;
    now += step.advanceMs;
    const decision = results[i];
    if (step.op === 'release') {
      // A release only ever frees a lease taken by an admitted consume.
      for (const lease of admittedBy[step.of] ?? []) lease.releasedAt ??= now;
      continue;
    }
    if (step.op !== 'consume' || !decision?.allowed) continue;
    const cost = step.cost ?? 1;
    const leases: Admitted[] = [];
    for (const [p, policy] of policies.entries()) {
      const key = `${p}:${policy.scope === 'global' ? '' : step.subject}`;
      const before = counters.get(key) ?? [];
      if (typeof policy.window !== 'number') throw new TypeError('firstBreach takes windows in ms');
      const bound = { limit: policy.limit, windowMs: policy.window, burst: policy.burst ?? policy.limit };
      const why = breach(policy.algorithm ?? 'sliding-window', bound, before, now, cost);
      if (why !== undefined)
        return `step ${i} (${step.subject}, cost ${cost}) admitted by ${policy.algorithm}: ${why}`;
      const call: Admitted = { at: now, cost };
      before.push(call);
      counters.set(key, before);
      leases.push(call);
    }
    admittedBy[i] = leases;
  }
  return undefined;
}

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
  /** When the call was refunded, if it was. */
  givenBackAt?: number;
  /** Whether its subject was reset after it: the call then counts for nothing. */
  forgotten?: boolean;
}

interface Bound {
  limit: number;
  windowMs: number;
  burst: number;
}

/** The costs of the calls `keep` selects; a call given back or forgotten counts nothing. */
function sum(calls: readonly Admitted[], keep: (c: Admitted) => boolean): number {
  let total = 0;
  for (const c of calls) if (keep(c) && c.givenBackAt === undefined && !c.forgotten) total += c.cost;
  return total;
}

/**
 * What a bucket may still hold of a call, times the window: all of it, or for a call given back, the
 * part the refill may already have covered when it was given back (a refund returns only the rest).
 */
function heldW(c: Admitted, limit: number, w: number): number {
  const full = c.forgotten ? 0 : c.cost * w;
  return c.givenBackAt === undefined ? full : Math.min(full, (c.givenBackAt - c.at) * limit);
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
      // A bucket of `burst` refilled at limit per window: over any [s, at], at most burst + (at - s) * limit / w,
      // counting of a call given back only what its refund could not return.
      for (const start of before) {
        if (start.at > at) continue;
        let usedW = cost * w;
        for (const c of before) if (c.at >= start.at) usedW += heldW(c, limit, w);
        if (usedW > burst * w + (at - start.at) * limit) {
          return `${usedW / w} in [${start.at}, ${at}] > ${burst} + ${at - start.at} ms of refill at ${limit}/${w} ms`;
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
 * promise, as a message; undefined when every admitted call kept every policy's promise. A refund
 * gives its call back (a bucket: only what the refill has not yet covered), a reset every earlier call
 * of its subject under subject-scoped policies, a release a lease.
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
    if (step.op === 'refund') {
      // Every policy's charge comes back, the lease included.
      for (const call of admittedBy[step.of] ?? []) {
        call.releasedAt ??= now;
        call.givenBackAt ??= now;
      }
      continue;
    }
    if (step.op === 'reset') {
      for (const [p, policy] of policies.entries()) {
        if (policy.scope === 'global') continue;
        for (const call of counters.get(`${p}:${step.subject}`) ?? []) {
          call.releasedAt ??= now;
          call.forgotten = true;
        }
      }
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

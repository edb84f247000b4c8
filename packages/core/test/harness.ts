import { createLimiter, type Decision, type Limiter, MemoryStore, type Policy } from '@sluice/core';
import { type ManualClock, manualClock } from '@sluice/core/testing';
import type { Algorithm, PolicyParams, StepResult } from '../src/algorithms/index.js';

/** A start aligned to every window used in tests (a whole day since the epoch), so window ends are round. */
export const ALIGNED = 19_676 * 86_400_000;

export interface Harness {
  clock: ManualClock;
  store: MemoryStore;
  limiter: Limiter;
  /** A consume of `cost` by `subject` (default 's'), answered synchronously by the memory store. */
  consume(cost?: number, subject?: string): Decision;
  /** A peek of `cost` by `subject`: the same question, nothing charged. */
  peek(cost?: number, subject?: string): Decision;
}

/** One limiter with `policy` (named 'p') on a memory store and a manual clock starting at `start`. */
export function harness(policy: Policy, start = ALIGNED): Harness {
  const clock = manualClock(start);
  const store = new MemoryStore({ clock });
  const limiter = createLimiter({ policies: [{ name: 'p', ...policy }], store });
  return {
    clock,
    store,
    limiter,
    consume: (cost = 1, subject = 's') => limiter.decide(subject, cost, 'consume') as Decision,
    peek: (cost = 1, subject = 's') => limiter.decide(subject, cost, 'peek') as Decision,
  };
}

/**
 * Checks that `denied.retryAfterMs` is exact for a call of `cost`: 1 ms earlier the call is still
 * denied, at `retryAfterMs` it is allowed (with no other traffic). Moves the clock by `retryAfterMs`.
 */
export function expectExactRetry(h: Harness, denied: Decision, cost = 1, subject = 's'): void {
  expect(denied.allowed).toBe(false);
  expect(denied.retryAfterMs).toBeGreaterThan(0);
  expect(Number.isFinite(denied.retryAfterMs)).toBe(true);
  h.clock.advance(denied.retryAfterMs - 1);
  expect(h.peek(cost, subject)).toMatchObject({ allowed: false, retryAfterMs: 1 });
  h.clock.advance(1);
  expect(h.peek(cost, subject).allowed).toBe(true);
}

/** A denied call changed nothing: the peek after it equals the peek before it. */
export function expectNothingCharged(h: Harness, cost: number, subject = 's'): Decision {
  const before = h.peek(1, subject);
  const denied = h.consume(cost, subject);
  expect(denied.allowed).toBe(false);
  expect(h.peek(1, subject)).toEqual(before);
  return denied;
}

/**
 * One step of `algorithm` on `state` (undefined: none), as a store runs it; `next` is the state it
 * would store, or `state` itself when it stores nothing (denied, or a cost of 0).
 */
export function stepOf(
  algorithm: Algorithm,
  state: number[] | undefined,
  now: number,
  cost: number,
  p: PolicyParams,
  leaseId = 0,
): StepResult & { next: number[] | undefined } {
  const next: number[] = [];
  const result = algorithm.step(state, 0, now, cost, p, leaseId, next);
  return { ...result, next: result.allowed && cost > 0 ? next : state };
}

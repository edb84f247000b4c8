import type { Decision } from '../decision.js';
import type { Limiter } from '../limiter.js';
import { type ManualClock, manualClock } from './manual-clock.js';

/**
 * A trace is a script of calls on a manual clock. Running the same trace against two stores (or a
 * store and the reference limiter) and comparing the decisions is the store conformance check: every
 * store must answer a trace exactly as the memory store and the reference models do.
 */
export type TraceStep =
  | { op: 'consume'; advanceMs: number; subject: string; cost?: number }
  | { op: 'peek'; advanceMs: number; subject: string; cost?: number }
  /**
   * `elsewhere`: through a second limiter from the same factory, as another process or limiter object
   * on the same store would (the factory must then build both on one store).
   */
  | { op: 'reset'; advanceMs: number; subject: string; elsewhere?: boolean }
  /** Calls `refund()` or `release()` of the decision of step `of` (an earlier consume); nothing if it has none. */
  | { op: 'refund'; advanceMs: number; of: number }
  | { op: 'release'; advanceMs: number; of: number };

/** A decision as plain data (its functions left out); null for steps that decide nothing. */
export type TraceDecision = Omit<Decision, 'refund' | 'release'>;
export type TraceResult = TraceDecision | null;

export interface TraceOptions {
  /** Clock time before the first step; default 1_700_000_000_000. */
  start?: number;
}

/** Builds the limiter under test, its store reading `clock`. */
export type LimiterFactory = (clock: ManualClock) => Limiter | Promise<Limiter>;

function plain(decision: Decision): TraceDecision {
  const { refund: _refund, release: _release, ...rest } = decision;
  return rest;
}

/** Runs `trace` against a limiter from `factory`, one step after the other; returns one result per step. */
export async function runTrace(
  factory: LimiterFactory,
  trace: readonly TraceStep[],
  options: TraceOptions = {},
): Promise<TraceResult[]> {
  const clock = manualClock(options.start);
  const limiter = await factory(clock);
  let elsewhere: Limiter | undefined;
  const decisions: Array<Decision | undefined> = [];
  const results: TraceResult[] = [];
  for (const step of trace) {
    clock.advance(step.advanceMs);
    let decision: Decision | undefined;
    if (step.op === 'consume' || step.op === 'peek') {
      decision = await limiter[step.op](step.subject, { cost: step.cost ?? 1 });
    } else if (step.op === 'reset') {
      if (step.elsewhere) elsewhere ??= await factory(clock);
      await (step.elsewhere ? elsewhere! : limiter).reset(step.subject);
    } else {
      await decisions[step.of]?.[step.op]?.();
    }
    decisions.push(decision);
    results.push(decision === undefined ? null : plain(decision));
  }
  return results;
}

export interface RandomTraceOptions {
  /** Same seed, same trace. */
  seed: number;
  length: number;
  /** Subjects to pick from; default ['a', 'b', 'c']. */
  subjects?: readonly string[];
  /** Costs are 1..maxCost; default 3. */
  maxCost?: number;
  /** Each step advances the clock 0..maxAdvanceMs; default 1000. */
  maxAdvanceMs?: number;
}

/**
 * A small seeded generator (mulberry32): traces are reproducible without a property-testing library.
 * Exported for the repository's own tests, not from the package's entry point.
 */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A reproducible random trace: mostly consumes, some peeks, resets, refunds and releases, with time
 * steps that are often 0 (bursts), often small and sometimes long (windows pass).
 */
export function randomTrace(options: RandomTraceOptions): TraceStep[] {
  const { seed, length, subjects = ['a', 'b', 'c'], maxCost = 3, maxAdvanceMs = 1000 } = options;
  const next = random(seed);
  const int = (n: number) => Math.floor(next() * n);
  const trace: TraceStep[] = [];
  for (let i = 0; i < length; i++) {
    const roll = next();
    const advanceMs = roll < 0.3 ? 0 : roll < 0.9 ? int(maxAdvanceMs / 10 + 1) : int(maxAdvanceMs + 1);
    const subject = subjects[int(subjects.length)]!;
    const kind = next();
    if (kind < 0.75 || i === 0) trace.push({ op: 'consume', advanceMs, subject, cost: 1 + int(maxCost) });
    else if (kind < 0.85) trace.push({ op: 'peek', advanceMs, subject, cost: 1 + int(maxCost) });
    else if (kind < 0.88) trace.push({ op: 'reset', advanceMs, subject });
    else trace.push({ op: kind < 0.94 ? 'refund' : 'release', advanceMs, of: int(i) });
  }
  return trace;
}

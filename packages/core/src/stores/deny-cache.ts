import type { Decision, PolicyInfo } from '../decision.js';
import type { PolicyOutcome } from './store.js';

/** Subjects remembered per limiter; the one the store denied longest ago goes first. */
export const DENY_CACHE_ENTRIES = 10_000;

interface Denial {
  /** The denied cost: only calls of exactly this cost are answered from the entry. */
  readonly cost: number;
  /** Local time until which the denial holds, counted from the call's send time. */
  readonly until: number;
  /** Local time the answer arrived: the store's times are counted down from here. */
  readonly arrivedAt: number;
  readonly decision: Decision;
}

/**
 * Remembers a remote store's denials so that a subject hammering a limit it already hit costs no
 * round trip. An entry answers only while every number it reports is exactly what the store would
 * answer, with no other process giving quota back:
 * - only calls of the same cost (a larger cost may be refused for longer, or for ever);
 * - only until the subject's `remaining` could next change with time alone. A policy that denies a
 *   call of cost c with `remaining` c - 1 gains its next unit exactly at its own retry time, and a
 *   fixed window's `remaining` holds until the window ends; any other policy's `remaining` (a
 *   sliding window's decaying estimate, a bucket's next token) may change sooner, so such a denial
 *   is not kept;
 * - never across the end of a policy's window or refill (its `resetMs`), and never longer than
 *   `holdMs` (the limiter's `denyCacheMs`), which bounds how long a reset or refund made elsewhere
 *   goes unseen;
 * - any later answer of the store for the subject replaces the entry, and a refund, release or reset
 *   through the limiter drops it, also when a denial was in flight at that moment (the `epoch`).
 * The hold is counted from when the call was sent (at or before the store decided), so it never
 * outlasts the store's own verdict; the reported times are counted from when the answer arrived, so
 * they are never too short.
 */
export class DenyCache {
  private readonly entries = new Map<string, Denial>();
  /** Moves on every drop: an answer to a call sent before a drop is not remembered. */
  private epoch = 0;

  constructor(
    private readonly policies: readonly PolicyInfo[],
    private readonly holdMs: number,
    private readonly maxEntries = DENY_CACHE_ENTRIES,
  ) {}

  /** What a call about to be sent must hand back to `remember`. */
  get moment(): number {
    return this.epoch;
  }

  /** The store's denial still holding at `now` for a call of `cost`, its times counted down; else undefined. */
  lookup(subject: string, cost: number, now: number): Decision | undefined {
    const denial = this.entries.get(subject);
    if (denial === undefined || denial.cost !== cost) return undefined;
    if (now >= denial.until) {
      this.entries.delete(subject);
      return undefined;
    }
    const elapsed = now - denial.arrivedAt;
    const left = (ms: number) => Math.max(0, Math.ceil(ms - elapsed));
    const { decision } = denial;
    return {
      ...decision,
      resetMs: left(decision.resetMs),
      retryAfterMs: left(decision.retryAfterMs),
      policies: decision.policies.map((p) => ({ ...p, resetMs: left(p.resetMs) })),
    };
  }

  /**
   * Takes the store's answer to a call of `cost` for `subject`, sent at `sentAt` when the epoch was
   * `moment`: keeps a denial that can be answered exactly for a while, and drops any earlier entry.
   */
  answered(
    subject: string,
    cost: number,
    decision: Decision,
    steps: readonly PolicyOutcome[],
    moment: number,
    sentAt: number,
    arrivedAt: number,
  ): void {
    this.entries.delete(subject);
    if (decision.allowed || moment !== this.epoch) return;
    const holdMs = this.exactFor(cost, steps);
    if (!(holdMs > 0)) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(subject, { cost, until: sentAt + holdMs, arrivedAt, decision });
  }

  /** How long a denial's numbers stay exactly the store's (0: not at all). */
  private exactFor(cost: number, steps: readonly PolicyOutcome[]): number {
    let holdMs = this.holdMs;
    for (let i = 0; i < steps.length; i++) {
      const { allowed, remaining, resetMs, retryAfterMs } = steps[i]!;
      if (!allowed) {
        if (remaining !== cost - 1 || !(retryAfterMs < Number.POSITIVE_INFINITY)) return 0;
        if (retryAfterMs < holdMs) holdMs = retryAfterMs;
      } else if (this.policies[i]!.algorithm !== 'fixed-window') return 0;
      if (resetMs > 0 && resetMs < holdMs) holdMs = resetMs;
    }
    return holdMs;
  }

  /** Drops the subject's entry, and any denial of it in flight. */
  forget(subject: string): void {
    this.epoch++;
    this.entries.delete(subject);
  }

  /** Drops every entry, and every denial in flight. */
  clear(): void {
    this.epoch++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

import type { Decision } from '../decision.js';

/** Subjects remembered per limiter; the one the store denied longest ago goes first. */
export const DENY_CACHE_ENTRIES = 10_000;

interface Denial {
  /** The denied cost: calls of this cost or more are denied too. */
  readonly cost: number;
  /** Local time until which the denial holds, counted from the call's send time. */
  readonly until: number;
  /** Local time the answer arrived: the store's times are counted down from here. */
  readonly arrivedAt: number;
  readonly decision: Decision;
}

/**
 * Remembers the store's denials so that a denied subject costs no round trip until its retry time.
 *
 * Exact when nothing gives quota back (no refund or reset of the subject by another process or
 * limiter object): without refunds, usage only grows with traffic and decays with time, so a call of
 * the same or a larger cost cannot be allowed before retryAfterMs. The hold is counted from when the
 * call was sent (at or before the store decided), so it never outlasts the store's own verdict; the
 * reported times are counted from when the answer arrived, so they stay honest (never too short).
 */
export class DenyCache {
  private readonly entries = new Map<string, Denial>();

  constructor(private readonly maxEntries = DENY_CACHE_ENTRIES) {}

  /** The store's denial still holding at `now` for a call of `cost`, its times counted down; else undefined. */
  lookup(subject: string, cost: number, now: number): Decision | undefined {
    const denial = this.entries.get(subject);
    if (denial === undefined) return undefined;
    if (now >= denial.until) {
      this.entries.delete(subject);
      return undefined;
    }
    if (cost < denial.cost) return undefined;
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
   * Keeps a store's denial of `cost`, when it names a finite time to wait. It is held until the retry
   * time, or until a policy's resetMs runs out if that comes first (a window ends, a bucket is full):
   * past that point the policies' numbers would be stale, so the store is asked again.
   */
  remember(subject: string, cost: number, decision: Decision, sentAt: number, arrivedAt: number): void {
    let holdMs = decision.retryAfterMs;
    if (!(holdMs > 0 && holdMs < Number.POSITIVE_INFINITY)) return;
    for (const { resetMs } of decision.policies) if (resetMs > 0 && resetMs < holdMs) holdMs = resetMs;
    // Re-inserting moves the subject to the young end of the Map's order.
    this.entries.delete(subject);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(subject, { cost, until: sentAt + holdMs, arrivedAt, decision });
  }

  forget(subject: string): void {
    this.entries.delete(subject);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

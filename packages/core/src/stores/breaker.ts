/** Consecutive failed calls that open the circuit. */
export const FAILURES_TO_OPEN = 5;
/** How long an open circuit keeps calls away from the store before one probe may go. */
export const PROBE_AFTER_MS = 1000;

/** What a call may do: go to the store, go as the one probe of an open circuit, or stay away. */
export type Admission = 'pass' | 'probe' | 'refuse';

/**
 * A circuit breaker over one store, shared by every limiter on it: once the store has failed
 * FAILURES_TO_OPEN calls in a row, calls stop reaching it (a dead Redis costs no timeout per request).
 * PROBE_AFTER_MS later one call at a time is let through as a probe; its success closes the circuit,
 * its failure keeps it open for another PROBE_AFTER_MS. Any success closes it.
 */
export class Breaker {
  private failures = 0;
  private open = false;
  private probing = false;
  private probeAt = 0;
  /** The error last counted: the calls of one failed batch share it, and count as one failure. */
  private lastCause: unknown;

  constructor(private readonly now: () => number) {}

  /** True while calls are kept away from the store (probes aside). */
  get isOpen(): boolean {
    return this.open;
  }

  admit(): Admission {
    if (!this.open) return 'pass';
    if (this.probing || this.now() < this.probeAt) return 'refuse';
    this.probing = true;
    return 'probe';
  }

  success(): void {
    this.failures = 0;
    this.open = false;
    this.probing = false;
    this.lastCause = undefined;
  }

  /**
   * `cause`: the call's error. A store that sends a turn's calls together (RedisStore, PostgresStore)
   * rejects them all with one error when that one statement fails: one failure of the store, not one
   * per call (a dropped connection under a batch of 16 opened the circuit, and a healthy database was
   * refused for a second: hostile review of #30). Calls that time out pass no cause: each counts.
   */
  failure(admission: Admission, cause?: unknown): void {
    if (typeof cause === 'object' && cause !== null) {
      if (cause === this.lastCause && admission !== 'probe') return;
      this.lastCause = cause;
    }
    if (this.open) {
      // Calls that started before the circuit opened may fail late; only the probe decides.
      if (admission !== 'probe') return;
      this.probing = false;
      this.probeAt = this.now() + PROBE_AFTER_MS;
    } else if (++this.failures >= FAILURES_TO_OPEN) {
      this.open = true;
      this.probeAt = this.now() + PROBE_AFTER_MS;
    }
  }
}

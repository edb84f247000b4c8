import { MemoryStore } from '../stores/memory-store.js';
import type {
  PolicyOutcome,
  RefundCall,
  Store,
  StoreCall,
  StoreLimiter,
  StoreOutcome,
} from '../stores/store.js';

/** One call a limiter made on its store, with the clock reading it was made at; consume holds the answer. */
export type RecordedCall =
  | { readonly op: 'consume'; readonly now: number; readonly call: StoreCall; readonly outcome: StoreOutcome }
  | { readonly op: 'refund'; readonly now: number; readonly call: RefundCall }
  | {
      readonly op: 'reset';
      readonly now: number;
      readonly limiter: StoreLimiter;
      readonly subject: string;
    };

/**
 * A MemoryStore that writes down every call a limiter makes of it (consume, peek, refund, release,
 * reset), so that the very same calls can be replayed on another store at the same clock readings.
 * Local, so a limiter runs it without the failure policy (whose deny cache would answer some calls
 * itself, and never ask the store).
 */
export class RecordingStore implements Store {
  readonly local = true;
  readonly log: RecordedCall[] = [];
  private readonly memory: MemoryStore;

  constructor(readonly clock: () => number) {
    this.memory = new MemoryStore({ clock });
  }

  consume(call: StoreCall): StoreOutcome {
    const outcome = this.memory.consume(call);
    // The memory store's steps are reused objects with more fields: kept as what a store reports.
    this.log.push({ op: 'consume', now: this.clock(), call, outcome: reported(outcome) });
    return outcome;
  }

  refund(call: RefundCall): void {
    this.log.push({ op: 'refund', now: this.clock(), call });
    this.memory.refund(call);
  }

  reset(limiter: StoreLimiter, subject: string): void {
    this.log.push({ op: 'reset', now: this.clock(), limiter, subject });
    this.memory.reset(limiter, subject);
  }
}

/** What a store reports of a call: its clock and, per policy, the five fields a decision reads. */
export function reported({ now, steps }: StoreOutcome): StoreOutcome {
  return {
    now,
    steps: steps.map(
      ({ allowed, remaining, resetMs, retryAfterMs, delayMs }): PolicyOutcome => ({
        allowed,
        remaining,
        resetMs,
        retryAfterMs,
        delayMs,
      }),
    ),
  };
}

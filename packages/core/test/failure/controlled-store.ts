import {
  MemoryStore,
  type RefundCall,
  type Store,
  type StoreCall,
  type StoreLimiter,
  type StoreOutcome,
} from '@sluice/core';
import { type ManualClock, manualClock } from '@sluice/core/testing';

/** How the store behaves right now. */
export type Health = 'up' | 'hang' | 'reject' | 'throw';

interface Hung {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

/**
 * A remote-looking store (`local: false`) that the test drives: it answers from a MemoryStore on a
 * manual clock while 'up', and otherwise hangs, rejects or throws, for consume, refund and reset alike.
 * It stands in for a store that can fail; the Redis fault suites use real redis-server processes.
 */
export class ControlledStore implements Store {
  readonly local = false;
  readonly clock: ManualClock;
  readonly memory: MemoryStore;
  health: Health = 'up';
  /** Calls that reached the store, by kind. */
  readonly calls = { consume: 0, refund: 0, reset: 0 };
  private hung: Hung[] = [];

  constructor(clock: ManualClock = manualClock()) {
    this.clock = clock;
    this.memory = new MemoryStore({ clock });
  }

  consume(call: StoreCall): Promise<StoreOutcome> {
    this.calls.consume++;
    return this.run(() => this.memory.consume(call));
  }

  refund(call: RefundCall): Promise<void> {
    this.calls.refund++;
    return this.run(() => this.memory.refund(call));
  }

  reset(limiter: StoreLimiter, subject: string): Promise<void> {
    this.calls.reset++;
    return this.run(() => this.memory.reset(limiter, subject));
  }

  /** Settles every hung call now, long after its deadline: with the store's answer, or an error. */
  answerHung(how: 'resolve' | 'reject'): void {
    const hung = this.hung;
    this.hung = [];
    for (const h of hung) {
      if (how === 'resolve') h.resolve();
      else h.reject(new Error('late failure'));
    }
  }

  /** Rejects every hung call with one error, as a store does when the one statement of a batch fails. */
  failHung(error: Error): void {
    const hung = this.hung;
    this.hung = [];
    for (const h of hung) h.reject(error);
  }

  private run<T>(answer: () => T): Promise<T> {
    switch (this.health) {
      case 'up':
        return Promise.resolve(answer());
      case 'reject':
        return Promise.reject(new Error('store down'));
      case 'throw':
        throw new Error('store threw');
      case 'hang':
        return new Promise<T>((resolve, reject) => {
          this.hung.push({ resolve: () => resolve(answer()), reject });
        });
    }
  }
}

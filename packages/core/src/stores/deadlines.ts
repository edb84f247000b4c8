/** One call in flight: failed at its deadline unless the store answers first. */
interface Waiter {
  readonly deadline: number;
  /** Fails the call; undefined once the call has settled either way. */
  fail: (() => void) | undefined;
  next: Waiter | undefined;
}

/** What a call that outlived its deadline rejects with (one shared error: the reason is never shown). */
const timedOut = new Error('the store did not answer within storeTimeout');
/** Whether a call failed by outliving its deadline (rather than by the store's own error). */
export function isTimeout(error: unknown): boolean {
  return error === timedOut;
}

/** The longest delay setTimeout takes (about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Bounds store calls by one timeout without a timer per call. Every call gets the same timeout, so
 * deadlines come in the order calls start: calls wait in a FIFO, and one timer, re-armed for the oldest
 * call still in flight, fails the overdue ones. Answers mostly arrive in order (a Redis connection is a
 * pipeline), so the FIFO holds little more than the calls in flight.
 */
export class Deadlines {
  private head: Waiter | undefined;
  private tail: Waiter | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly timeoutMs: number) {}

  /**
   * Calls `answered` with what `promise` resolves to, or `failed` when it rejects or once `timeoutMs`
   * have passed: exactly one of them, once. An answer after the deadline goes to `late` (the store did
   * the work: what it charged must be given back), and a later rejection is handled here, so it never
   * goes unhandled. Callbacks rather than a promise: a decision costs no promise more.
   */
  watch<T>(
    promise: Promise<T>,
    answered: (value: T) => void,
    failed: (error: unknown) => void,
    late?: (value: T) => void,
  ): void {
    const waiter: Waiter = {
      deadline: performance.now() + this.timeoutMs,
      fail: () => failed(timedOut),
      next: undefined,
    };
    if (this.tail === undefined) this.head = waiter;
    else this.tail.next = waiter;
    this.tail = waiter;
    if (this.timer === undefined) this.arm(this.timeoutMs);
    promise.then(
      (value) => {
        if (this.settle(waiter)) answered(value);
        else late?.(value);
      },
      (error: unknown) => {
        if (this.settle(waiter)) failed(error);
      },
    );
  }

  /** Settles as `promise` does, or rejects once `timeoutMs` have passed (see watch). */
  race<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => this.watch(promise, resolve, reject));
  }

  /** Marks a call answered; false when its deadline already failed it. */
  private settle(waiter: Waiter): boolean {
    if (waiter.fail === undefined) return false;
    waiter.fail = undefined;
    this.dropSettled();
    return true;
  }

  private dropSettled(): void {
    let head = this.head;
    while (head !== undefined && head.fail === undefined) head = head.next;
    this.head = head;
    if (head === undefined) this.tail = undefined;
  }

  /** Fails every overdue call; the timer stays off while nothing is in flight. */
  private readonly expire = (): void => {
    this.timer = undefined;
    const now = performance.now();
    let head = this.head;
    while (head !== undefined && (head.fail === undefined || head.deadline <= now)) {
      const fail = head.fail;
      head.fail = undefined;
      fail?.();
      head = head.next;
    }
    this.head = head;
    if (head === undefined) this.tail = undefined;
    else this.arm(head.deadline - now);
  };

  private arm(delayMs: number): void {
    // Unref'd: a limiter never keeps a process alive on its own. Longer delays than a timer takes wait in steps.
    this.timer = setTimeout(this.expire, Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(delayMs))));
    this.timer.unref?.();
  }
}

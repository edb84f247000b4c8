/** One call in flight: failed at its deadline unless the store answers first. */
interface Waiter {
  /** Infinity until the turn that made the call is over (see Deadlines). */
  deadline: number;
  /** Fails the call; undefined once the call has settled either way. */
  fail: (() => void) | undefined;
  /** Whether a stall of the process at its deadline was already given back to it (once only). */
  givenBack: boolean;
  next: Waiter | undefined;
}

/** What a call that outlived its deadline rejects with (one shared error: the reason is never shown). */
const timedOut = new Error('the store did not answer within storeTimeout');
/** Whether a call failed by outliving its deadline (rather than by the store's own error). */
export function isTimeout(error: unknown): boolean {
  return error === timedOut;
}

import { soon, unref } from '../portable/runtime.js';

/** The longest delay setTimeout takes (about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** A timer this much later than asked says the process stalled, not that timers run coarse. */
const STALL_MS = 10;
/**
 * What a stall gives back is at most this share of timeoutMs: enough for a client to write what it
 * held and read the answer (a round trip), while a store that is away still fails its calls soon after
 * timeoutMs (the chaos suites bound every answer by storeTimeout + 100 ms of the process's own time).
 */
const GIVE_BACK_SHARE = 0.25;

/**
 * Bounds store calls by one timeout without a timer per call. Every call gets the same timeout, so
 * deadlines come in the order calls start: calls wait in a FIFO, and one timer, re-armed for the oldest
 * call still in flight, fails the overdue ones. Answers mostly arrive in order (a Redis connection is a
 * pipeline), so the FIFO holds little more than the calls in flight.
 *
 * A deadline is the store's, not the process's: time the event loop spends busy (a burst being
 * parsed, a cold start compiling) is not the store being slow. The newcomer review saw a 1 ms Redis
 * miss a 250 ms storeTimeout behind a 300 ms busy loop, and 'local' admit a client past its limit. So
 * a call's time starts once the turn that made it is over (a store that batches a turn's calls sends
 * them only then), and an overdue call fails one turn after its timer, once the I/O phase has read
 * any answer already waiting in a socket (timers run before I/O in a turn). A timer that fires late
 * found the process stalled across the deadline: each call in flight gets, once, as much time again
 * as the stall took, up to a quarter of timeoutMs, so a client that writes a turn late (node-redis, at
 * setImmediate) or a reply that takes a few turns to read (fetch) is not failed for the process's stall.
 */
export class Deadlines {
  private head: Waiter | undefined;
  private tail: Waiter | undefined;
  /** Whether an expiry is coming: a timer armed, or one turn deferred after pending I/O. */
  private scheduled = false;
  /** Whether this expiry already let pending I/O run once. */
  private deferred = false;
  /** The first call whose deadline the end of this turn sets; later ones follow it in the FIFO. */
  private unstamped: Waiter | undefined;
  /** When the armed timer should fire. */
  private dueAt = 0;

  /**
   * @param afterSent the store's, where it writes a turn's calls later than the end of that turn
   * (Store.afterSent): their time starts once it has.
   */
  constructor(
    private readonly timeoutMs: number,
    private readonly afterSent?: (task: () => void) => void,
  ) {}

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
      deadline: Number.POSITIVE_INFINITY,
      fail: () => failed(timedOut),
      givenBack: false,
      next: undefined,
    };
    if (this.tail === undefined) this.head = waiter;
    else this.tail.next = waiter;
    this.tail = waiter;
    if (this.unstamped === undefined) {
      this.unstamped = waiter;
      soon(this.turnOver);
    }
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
    if (head === undefined) {
      // Every call settled: the next one starts a new chain (and a stamp of its own).
      this.tail = undefined;
      this.unstamped = undefined;
    }
  }

  /** The turn is over: its calls' time starts now, or once the store has written them. */
  private readonly turnOver = (): void => {
    const afterSent = this.afterSent;
    if (afterSent === undefined) {
      this.stamp();
      return;
    }
    // Once, for this chain only (a chain started since has a turn of its own), and bounded: a store
    // that never says (a wrapper that drops the task) has its calls' time start one timeoutMs late,
    // where trusting it hung them for ever (hostile review of aa81248).
    const chain = this.unstamped;
    let done = false;
    let fallback: ReturnType<typeof setTimeout> | undefined;
    const written = () => {
      if (done) return;
      done = true;
      clearTimeout(fallback);
      if (this.unstamped === chain) this.stamp();
    };
    try {
      afterSent(written);
    } catch {
      written();
    }
    if (!done) {
      fallback = setTimeout(written, this.timeoutMs);
      unref(fallback);
    }
  };

  /** The calls waiting start their time now, all at once: their deadlines keep the FIFO's order. */
  private readonly stamp = (): void => {
    const deadline = performance.now() + this.timeoutMs;
    for (let waiter = this.unstamped; waiter !== undefined; waiter = waiter.next) waiter.deadline = deadline;
    this.unstamped = undefined;
    if (!this.scheduled && this.head !== undefined) this.arm(this.timeoutMs);
  };

  /** Fails every overdue call; the timer stays off while nothing is in flight. */
  private readonly expire = (): void => {
    this.scheduled = false;
    const deferred = this.deferred;
    this.deferred = false;
    this.dropSettled();
    const head = this.head;
    if (head === undefined) return;
    const now = performance.now();
    // A head not stamped yet: stamp() arms the timer for it.
    if (head.deadline === Number.POSITIVE_INFINITY) return;
    if (!deferred && now - this.dueAt > STALL_MS) this.giveBack(head, now, now - this.dueAt);
    if (head.deadline > now) {
      this.arm(head.deadline - now);
      return;
    }
    if (!deferred) {
      // Answers already in a socket are read in the I/O phase, which `soon` follows.
      this.deferred = true;
      this.scheduled = true;
      soon(this.expire);
      return;
    }
    let waiter: Waiter | undefined = head;
    while (waiter !== undefined && (waiter.fail === undefined || waiter.deadline <= now)) {
      const fail = waiter.fail;
      waiter.fail = undefined;
      fail?.();
      waiter = waiter.next;
    }
    this.head = waiter;
    if (waiter === undefined) {
      // As dropSettled: the next call starts a chain of its own. A chain left unstamped here (its calls
      // settled, its stamp still to come) took the next call in without a turn of its own, and the
      // stale stamp never reached it: a call with no deadline, holding up every later one (hostile
      // review of f886232; the same, in a narrower window, before afterSent).
      this.tail = undefined;
      this.unstamped = undefined;
    } else if (waiter.deadline !== Number.POSITIVE_INFINITY) this.arm(waiter.deadline - now);
  };

  /**
   * Each call in flight not given time before gets, from now, as long as the stall took (at most
   * GIVE_BACK_SHARE of timeoutMs). Deadlines rise to one floor: their FIFO order holds. Calls made
   * this turn are not in flight yet (their deadline is still to be stamped).
   */
  private giveBack(head: Waiter, now: number, stallMs: number): void {
    const floor = now + Math.min(stallMs, this.timeoutMs * GIVE_BACK_SHARE);
    for (let waiter: Waiter | undefined = head; waiter !== undefined; waiter = waiter.next) {
      if (waiter.givenBack || waiter.fail === undefined || waiter.deadline === Number.POSITIVE_INFINITY)
        continue;
      waiter.givenBack = true;
      waiter.deadline = Math.max(waiter.deadline, floor);
    }
  }

  private arm(delayMs: number): void {
    // Unref'd: a limiter never keeps a process alive on its own. Longer delays than a timer takes wait in steps.
    this.scheduled = true;
    const ms = Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(delayMs)));
    this.dueAt = performance.now() + ms;
    const timer = setTimeout(this.expire, ms);
    timer.unref?.();
  }
}

import { buildDecision, type Decision, type PolicyInfo } from '../decision.js';
import type { OnStoreError } from '../options.js';
import { Breaker } from './breaker.js';
import { Deadlines } from './deadlines.js';
import { DenyCache } from './deny-cache.js';
import { MemoryStore } from './memory-store.js';
import type { PolicyOutcome, RefundCall, Store, StoreCall, StoreLimiter, StoreOutcome } from './store.js';

/**
 * What `onStoreError: 'deny'` tells a client to wait: one second, the `Retry-After: 1` of the 503
 * the adapters send. Its resetMs is the same second: nothing is known of the quota.
 */
const STORE_ERROR_RETRY_MS = 1000;
/** Keys of the in-process fallback of one store: enough for an outage, bounded under a flood. */
const FALLBACK_MAX_KEYS = 100_000;

/** Turns a store's outcome into the limiter's decision; its refund and release go to `refunds`. */
export type Finish = (outcome: StoreOutcome, call: StoreCall, refunds: Pick<Store, 'refund'>) => Decision;

/** What every limiter on one store shares: the store is up or down for all of them. */
interface StoreHealth {
  readonly breaker: Breaker;
  /** Decides `onStoreError: 'local'` calls, under the limiters' own namespaces. */
  readonly fallback: MemoryStore;
}

const health = new WeakMap<Store, StoreHealth>();

function healthOf(store: Store): StoreHealth {
  let shared = health.get(store);
  if (shared === undefined) {
    shared = {
      breaker: new Breaker(store.clock ?? performanceNow),
      fallback: new MemoryStore({ maxKeys: FALLBACK_MAX_KEYS, clock: store.clock ?? Date.now }),
    };
    health.set(store, shared);
  }
  return shared;
}

function performanceNow(): number {
  return performance.now();
}

const nothingToGiveBack = async (): Promise<void> => {};

/**
 * Runs one limiter's calls on a store that can fail (`local === false`): each call settles within
 * `storeTimeout`; a failed or late call, or any call while the store's circuit is open, is decided by
 * `onStoreError` with `degraded: true`; the store's denials are remembered so that a denied subject
 * costs no round trip until its retry time. refund, release and reset never reject: a store that fails
 * them is skipped (a lost refund leaves the charge to expire with its window; a lost release, the lease
 * to expire after its window).
 */
export class StoreGuard {
  private readonly breaker: Breaker;
  private readonly fallback: MemoryStore;
  private readonly deadlines: Deadlines;
  /** Off for limiters with a concurrency policy: a release can free a slot before any retry time. */
  private readonly denials: DenyCache | undefined;
  private readonly now: () => number;
  /** A refund of a global-scoped charge may unblock every subject, not only its own. */
  private readonly hasGlobal: boolean;
  private readonly leasing: boolean;
  private readonly allowSteps: readonly PolicyOutcome[];
  private readonly denySteps: readonly PolicyOutcome[];

  constructor(
    private readonly store: Store,
    private readonly policies: readonly PolicyInfo[],
    private readonly target: StoreLimiter,
    private readonly onStoreError: OnStoreError,
    storeTimeoutMs: number,
    private readonly finish: Finish,
  ) {
    ({ breaker: this.breaker, fallback: this.fallback } = healthOf(store));
    this.deadlines = new Deadlines(storeTimeoutMs);
    this.now = store.clock ?? performanceNow;
    this.leasing = target.policies.some((p) => p.algorithm.name === 'concurrency');
    this.denials = this.leasing ? undefined : new DenyCache();
    this.hasGlobal = target.policies.some((p) => p.scope === 'global');
    // 'allow': nothing was counted, so every policy reports its full capacity.
    this.allowSteps = target.policies.map((p) => ({
      allowed: true,
      remaining: p.params.burst,
      resetMs: 0,
      retryAfterMs: 0,
      delayMs: 0,
    }));
    this.denySteps = target.policies.map(() => ({
      allowed: false,
      remaining: 0,
      resetMs: STORE_ERROR_RETRY_MS,
      retryAfterMs: STORE_ERROR_RETRY_MS,
      delayMs: 0,
    }));
  }

  decide(call: StoreCall): Decision | Promise<Decision> {
    const sentAt = this.now();
    const cached = this.denials?.lookup(call.subject, call.cost, sentAt);
    if (cached !== undefined) return cached;
    const admission = this.breaker.admit();
    if (admission === 'refuse') return this.degrade(call);
    let answer: Promise<StoreOutcome>;
    try {
      answer = Promise.resolve(this.store.consume(call));
    } catch {
      this.breaker.failure(admission);
      return this.degrade(call);
    }
    return new Promise<Decision>((resolve) => {
      const failed = (): void => {
        this.breaker.failure(admission);
        resolve(this.degrade(call));
      };
      this.deadlines.watch(
        answer,
        (outcome) => {
          let decision: Decision;
          try {
            decision = this.fromStore(outcome, call, sentAt);
          } catch {
            return failed();
          }
          resolve(decision);
        },
        failed,
      );
    });
  }

  /** Gives a charge back; never rejects. */
  async refund(call: RefundCall): Promise<void> {
    if (this.hasGlobal) this.denials?.clear();
    else this.denials?.forget(call.subject);
    await this.skipFailure(() => this.store.refund(call));
  }

  /** Forgets the subject in the store, the fallback and the deny cache; never rejects. */
  async reset(subject: string): Promise<void> {
    this.denials?.forget(subject);
    this.fallback.reset(this.target, subject);
    await this.skipFailure(() => this.store.reset(this.target, subject));
  }

  private fromStore(outcome: StoreOutcome, call: StoreCall, sentAt: number): Decision {
    const decision = this.finish(outcome, call, this);
    this.breaker.success();
    if (!decision.allowed) this.denials?.remember(call.subject, call.cost, decision, sentAt, this.now());
    return decision;
  }

  /** The decision taken without the store, as `onStoreError` says. */
  private degrade(call: StoreCall): Decision {
    let decision: Decision;
    if (this.onStoreError === 'local') {
      decision = this.finish(this.fallback.consume(call), call, this.fallback);
    } else if (this.onStoreError === 'allow') {
      const consumed = call.mode === 'consume';
      decision = buildDecision(this.policies, this.allowSteps, consumed ? nothingToGiveBack : undefined);
      if (consumed && this.leasing) decision.release = nothingToGiveBack;
    } else {
      decision = buildDecision(this.policies, this.denySteps);
      decision.reason = 'store-error';
    }
    decision.degraded = true;
    return decision;
  }

  /** Runs a refund or reset on the store unless its circuit is open; failures and timeouts are dropped. */
  private async skipFailure(run: () => void | Promise<void>): Promise<void> {
    if (this.breaker.isOpen) return;
    try {
      await this.deadlines.race(Promise.resolve(run()));
    } catch {
      // Swallowed by design: see the class comment.
    }
  }
}

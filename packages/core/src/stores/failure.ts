import { buildDecision, type Decision, type PolicyInfo } from '../decision.js';
import {
  type CircuitState,
  decisionChannel,
  publishCircuit,
  publishDecision,
  publishStoreError,
  safeMessage,
  storeKind,
} from '../diagnostics.js';
import { ErrorCodes, SluiceConfigError } from '../errors.js';
import type { LimiterConfig } from '../options.js';
import { emitWarning } from '../portable/runtime.js';
import { type Admission, Breaker } from './breaker.js';
import { Deadlines, isTimeout } from './deadlines.js';
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
/**
 * The longest a call waits for its store's `ready()` before failing over: past PostgresStore's own
 * bound (3 s), so that it is the one a PostgresStore meets; a custom store's that never settles ends here.
 */
const READY_WAIT_MS = 5000;

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
 * `onStoreError` with `degraded: true`; the store's denials are remembered (DenyCache) so that a denied
 * subject costs no round trip while the answer stays exact. refund, release and reset never reject: a
 * store that fails them is skipped (a lost refund leaves the charge to expire with its window; a lost
 * release, the lease to expire after its window).
 *
 * What it sees is published on the diagnostics channels (decisions, store failures, the circuit as this
 * limiter's calls see it change), and the first decision taken without the store, and the first back
 * on it, each emit one warning.
 */
export class StoreGuard {
  private readonly breaker: Breaker;
  private readonly fallback: MemoryStore;
  private readonly deadlines: Deadlines;
  /** Off for limiters with a concurrency policy (a release can free a slot at any time) and with denyCacheMs 0. */
  private readonly denials: DenyCache | undefined;
  private readonly now: () => number;
  /** A refund of a global-scoped charge may unblock every subject, not only its own. */
  private readonly hasGlobal: boolean;
  private readonly leasing: boolean;
  private readonly allowSteps: readonly PolicyOutcome[];
  private readonly denySteps: readonly PolicyOutcome[];
  private readonly name: string;
  private readonly storeName: string;
  private readonly onStoreError: LimiterConfig['onStoreError'];
  /** The circuit as this limiter's calls last saw it. */
  private circuit: CircuitState = 'closed';
  /** Whether this limiter's last decision was taken without the store. */
  private degraded = false;

  constructor(
    private readonly store: Store,
    private readonly policies: readonly PolicyInfo[],
    private readonly target: StoreLimiter,
    config: LimiterConfig,
    /** False for limiters Sluice keeps for itself: nothing is published or warned for them. */
    private readonly published: boolean,
    private readonly finish: Finish,
  ) {
    ({ breaker: this.breaker, fallback: this.fallback } = healthOf(store));
    this.deadlines = new Deadlines(config.storeTimeoutMs, store.afterSent?.bind(store));
    this.now = store.clock ?? performanceNow;
    this.name = config.name;
    this.storeName = storeKind(store);
    this.onStoreError = config.onStoreError;
    this.leasing = target.policies.some((p) => p.algorithm.name === 'concurrency');
    this.denials =
      this.leasing || config.denyCacheMs === 0 ? undefined : new DenyCache(policies, config.denyCacheMs);
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
    if (cached !== undefined) return this.announce(cached, call, undefined);
    const admission = this.breaker.admit();
    if (admission === 'refuse') return this.degrade(call);
    if (admission === 'probe') this.see('half-open');
    const starting = this.starting();
    if (starting === undefined) return this.send(call, admission, sentAt);
    // Not ready yet (a cold start): the call's storeTimeout starts once the store is.
    return starting.then(
      () => this.send(call, admission, this.now()),
      (error: unknown) => this.failed(call, admission, error),
    );
  }

  /**
   * The store's `ready()`, guarded as its calls are (a custom store's may throw, answer a value, or
   * never settle): a throw is the store failing, and a wait is bounded by READY_WAIT_MS.
   */
  private starting(): Promise<void> | undefined {
    let starting: Promise<void> | undefined;
    try {
      starting = this.store.ready?.();
    } catch (error) {
      return Promise.reject(error);
    }
    if (starting === undefined) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`sluice: the store was not ready within ${READY_WAIT_MS} ms`)),
        READY_WAIT_MS,
      );
    });
    return Promise.race([Promise.resolve(starting), late]).finally(() => clearTimeout(timer));
  }

  /** The call to the store, within storeTimeout. */
  private send(call: StoreCall, admission: Admission, sentAt: number): Decision | Promise<Decision> {
    const moment = this.denials === undefined ? 0 : this.denials.moment;
    let answer: Promise<StoreOutcome>;
    try {
      answer = Promise.resolve(this.store.consume(call));
    } catch (error) {
      return this.failed(call, admission, error);
    }
    return new Promise<Decision>((resolve) => {
      this.deadlines.watch(
        answer,
        (outcome) => {
          let decision: Decision;
          try {
            decision = this.fromStore(outcome, call, sentAt, moment);
          } catch (error) {
            return resolve(this.failed(call, admission, error));
          }
          resolve(decision);
        },
        (error) => resolve(this.failed(call, admission, error)),
        (outcome) => this.giveBackLate(outcome, call),
      );
    });
  }

  /**
   * A call decided without the store whose store answer came anyway (Redis ran it once a stall ended):
   * what it charged, rate and lease, is given back, or a stall would leave charges no request holds
   * (a subject pinned by leases for a window, refusals that used quota, 'local' counting twice). Sent
   * even while the circuit is open: the store has just answered.
   */
  private giveBackLate(outcome: StoreOutcome, call: StoreCall): void {
    if (call.mode !== 'consume' || !outcome.steps.every((s) => s.allowed)) return;
    this.deadlines.race(Promise.resolve(this.finish(outcome, call, this.store).refund?.())).catch(() => {});
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

  private fromStore(outcome: StoreOutcome, call: StoreCall, sentAt: number, moment: number): Decision {
    const decision = this.finish(outcome, call, this);
    this.breaker.success();
    this.see('closed');
    if (this.degraded) this.recovered();
    const arrivedAt = this.now();
    this.denials?.answered(call.subject, call.cost, decision, outcome.steps, moment, sentAt, arrivedAt);
    return this.announce(decision, call, arrivedAt - sentAt);
  }

  /** A store call that failed or timed out: reported, counted by the circuit, decided without the store. */
  private failed(call: StoreCall, admission: Admission, error: unknown): Decision {
    // A timeout is each call's own (one shared Error stands for them all): each counts.
    this.breaker.failure(admission, isTimeout(error) ? undefined : error);
    if (this.published) publishStoreError(this.name, this.storeName, isTimeout(error), error);
    return this.degrade(call, error);
  }

  /** The decision taken without the store, as `onStoreError` says; `error`, the store's failure, if any. */
  private degrade(call: StoreCall, error?: unknown): Decision {
    if (this.breaker.isOpen) this.see('open');
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
    if (!this.degraded) this.degradedNow(error);
    return this.announce(decision, call, undefined);
  }

  private announce(decision: Decision, call: StoreCall, storeMs: number | undefined): Decision {
    if (decisionChannel.hasSubscribers && call.mode === 'consume' && this.published) {
      publishDecision(this.name, decision, storeMs);
    }
    return decision;
  }

  /** Publishes the circuit's state when this limiter's calls see it change. */
  private see(state: CircuitState): void {
    if (state === this.circuit) return;
    this.circuit = state;
    if (this.published) publishCircuit(this.name, state);
  }

  /**
   * A coded failure (a PostgresStore's ERR_SLUICE_FOREIGN_TABLE, found at its first use) is named here,
   * with what it says to do: the warning is what an operator sees, and sluice:store-error has no code.
   */
  private degradedNow(error: unknown): void {
    this.degraded = true;
    if (!this.published) return;
    const coded = error instanceof SluiceConfigError;
    const why = coded ? `failed with ${error.code}` : 'failed or answered later than storeTimeout';
    emitWarning(
      `Limiter "${this.name}" is deciding without its store (${this.storeName} ${why}); onStoreError '${this.onStoreError}' decides until it is back.${coded ? ` ${safeMessage(error)}` : ''}`,
      ErrorCodes.STORE_DEGRADED,
    );
  }

  private recovered(): void {
    this.degraded = false;
    if (!this.published) return;
    emitWarning(
      `Limiter "${this.name}" is deciding on its store (${this.storeName}) again.`,
      ErrorCodes.STORE_RECOVERED,
    );
  }

  /** Runs a refund or reset on the store unless its circuit is open; failures and timeouts are dropped. */
  private async skipFailure(run: () => void | Promise<void>): Promise<void> {
    if (this.breaker.isOpen) return;
    try {
      // Only when not ready: a wait for nothing would put the call behind those made after it.
      const starting = this.starting();
      if (starting !== undefined) await starting;
      await this.deadlines.race(Promise.resolve(run()));
    } catch {
      // Swallowed by design: see the class comment.
    }
  }
}

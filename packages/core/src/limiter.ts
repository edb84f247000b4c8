import { buildDecision, buildOneDecision, type Decision, type PolicyInfo } from './decision.js';
import { decisionChannel, publishDecision } from './diagnostics.js';
import { ErrorCodes } from './errors.js';
import { encodeName, encodeSubject, policyNamespace } from './keys.js';
import { type LimiterConfig, type LimiterOptions, parseLimiterOptions } from './options.js';
import { emitWarning } from './portable/runtime.js';
import { StoreGuard } from './stores/failure.js';
import { countersOf } from './stores/given-client.js';
import { type KeySpace, MemoryStore } from './stores/memory-store.js';
import type { Store, StoreCall, StoreLimiter, StoreOutcome, StorePolicy } from './stores/store.js';

export interface CallOptions {
  /** Units this call spends; a positive integer, default 1. */
  cost?: number;
}

export interface Limiter {
  readonly name: string;
  readonly policies: readonly PolicyInfo[];
  readonly config: LimiterConfig;
  /** Charges `subject` under every policy if all allow, none otherwise. */
  consume(subject: string, options?: CallOptions): Promise<Decision>;
  /** Would a call of this cost (default 1) be allowed now? The same shape; consumes nothing. */
  peek(subject: string, options?: CallOptions): Promise<Decision>;
  /** Forgets the subject under every subject-scoped policy, and lifts its ban (the HTTP `ban` option). */
  reset(subject: string): Promise<void>;
  /**
   * The same decision as `consume` or `peek`, as a plain value when the store answers in process
   * (MemoryStore): the adapters use it so that an allowed request costs no promise.
   */
  decide(subject: string, cost: number, mode: StoreCall['mode']): Decision | Promise<Decision>;
}

/** What a store has seen under one prefix and name: the policies, and whether the options named it. */
interface SeenName {
  readonly signature: string;
  readonly named: boolean;
}
/**
 * The prefixes and names of each store's counters (its client's, for stores given one: two stores of one
 * Redis client, as the README writes `new RedisStore({ client })` in each limiter, share keys); null
 * once warned of, as it is said once.
 */
const seenNames = new WeakMap<object, Map<string, SeenName | null>>();

/**
 * `named`: the options gave a name. Two limiters of one store, prefix and name share counters: on
 * purpose where a name was given (API.md: how two routes share a limit), by surprise where neither was
 * given one and both are 'default' (review 28: /a three times, then /b refused), as express-rate-limit 8
 * warns of a store reused across limiters (ERR_ERL_STORE_REUSE). Other policies under one name warn
 * either way.
 */
function warnOnNameReuse(store: Store, config: LimiterConfig, named: boolean): void {
  const signature = JSON.stringify(
    config.policies.map((p) => [p.name, p.algorithm, p.limit, p.windowMs, p.params.burst, p.scope]),
  );
  const counters = countersOf(store);
  let names = seenNames.get(counters);
  if (names === undefined) {
    names = new Map();
    seenNames.set(counters, names);
  }
  const key = `${config.prefix}\u0000${config.name}`;
  const earlier = names.get(key);
  if (earlier === undefined) {
    names.set(key, { signature, named });
    return;
  }
  const samePolicies = earlier?.signature === signature;
  if (earlier === null || (samePolicies && (named || earlier.named))) return;
  names.set(key, null);
  emitWarning(
    samePolicies
      ? `Two limiters on one store (or on stores of one client) are both named "${config.name}", neither given a name, so they share one counter: a client's requests through either count against both. Give each its own name; to share the limit on purpose, pass one limiter (one middleware) to every route, or give both the same name.`
      : `Two limiters on one store are named "${config.name}" with different policies; they share counters only where policy names match. Give each its own name.`,
    ErrorCodes.NAME_REUSE,
  );
}

function checkSubject(subject: unknown): string {
  if (typeof subject !== 'string') throw new TypeError(`subject must be a string; got ${typeof subject}`);
  return subject;
}

/** The cost a call's options give: 1 unless they say otherwise. */
function costOf(options: CallOptions | undefined): number {
  if (options === undefined) return 1;
  // rate-limiter-flexible's consume(key, points) would otherwise be charged 1, silently.
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(
      `options must be an object such as { cost: 2 }; got ${options === null ? 'null' : `the ${typeof options} ${String(options)}`} (consume(key, points) is consume(key, { cost: points }) here)`,
    );
  }
  return options.cost === undefined ? 1 : checkCost(options.cost);
}

function checkCost(cost: unknown): number {
  if (typeof cost !== 'number' || !Number.isSafeInteger(cost) || cost <= 0) {
    throw new RangeError(`cost must be a positive integer; got ${String(cost)}`);
  }
  return cost;
}

class SluiceLimiter implements Limiter {
  readonly name: string;
  readonly policies: readonly PolicyInfo[];
  readonly config: LimiterConfig;
  private readonly store: Store;
  private readonly target: StoreLimiter;
  /** The concurrency policies alone: what `release()` gives back. */
  private readonly leases: StoreLimiter | undefined;
  private leaseId: number;
  /**
   * The limiters that keep this one's ban (strikes and marker), registered by the HTTP `ban` option:
   * `reset` resets them too, so it lifts the ban in the store and in this process's deny caches.
   */
  companions: Limiter[] | undefined;
  /** Timeout, circuit breaker, fallback and deny cache for stores that can fail. */
  private readonly guard: StoreGuard | undefined;
  /**
   * The store when it is a MemoryStore, there is one policy and it takes no lease: decided without
   * StoreCall and StoreOutcome.
   */
  private readonly memory: MemoryStore | undefined;
  /** The memory store's keys of that policy. */
  private readonly space: KeySpace | undefined;
  /** That policy, as the memory store runs it (target.policies[0], one field read on the hot path). */
  private readonly only: StorePolicy | undefined;

  /** `published`: false for limiters Sluice builds for itself, whose calls are not the app's decisions. */
  constructor(
    options: LimiterOptions,
    private readonly published = true,
  ) {
    const config = parseLimiterOptions(options);
    this.config = config;
    this.name = config.name;
    this.store = config.store ?? new MemoryStore();
    this.policies = Object.freeze(
      config.policies.map((p) =>
        Object.freeze({
          name: p.name,
          algorithm: p.algorithm,
          limit: p.limit,
          windowMs: p.windowMs,
          delay: p.delay,
        }),
      ),
    );
    const storePolicies = config.policies.map((p) =>
      Object.freeze({
        algorithm: p.step,
        params: p.params,
        scope: p.scope,
        namespace: policyNamespace(config.prefix, config.name, p.name, p.step.code),
      }),
    );
    this.target = Object.freeze({
      prefix: config.prefix,
      name: encodeName(config.name),
      policies: Object.freeze(storePolicies),
      hasGlobalPolicy: storePolicies.some((p) => p.scope === 'global'),
    });
    const leasing = storePolicies.filter((p) => p.algorithm.name === 'concurrency');
    this.leases =
      leasing.length > 0 ? Object.freeze({ ...this.target, policies: Object.freeze(leasing) }) : undefined;
    // Lease ids only need to differ between calls that overlap; a random start keeps processes apart.
    this.leaseId = Math.floor(Math.random() * 2 ** 40) * 1024;
    if (config.store !== undefined && published)
      warnOnNameReuse(this.store, config, options.name !== undefined);
    // Exactly a MemoryStore: a subclass may watch or change `consume`, which this path would skip.
    const inMemory = Object.getPrototypeOf(this.store) === MemoryStore.prototype;
    this.memory =
      inMemory && storePolicies.length === 1 && this.leases === undefined
        ? (this.store as MemoryStore)
        : undefined;
    this.only = this.memory === undefined ? undefined : storePolicies[0];
    this.space = this.memory?.spaceOf(storePolicies[0]!.namespace);
    this.guard = this.store.local
      ? undefined
      : new StoreGuard(this.store, this.policies, this.target, config, published, (o, c, r) =>
          this.finish(o, c, r),
        );
  }

  consume(subject: string, options?: CallOptions): Promise<Decision> {
    return this.settle(subject, options, 'consume');
  }

  peek(subject: string, options?: CallOptions): Promise<Decision> {
    return this.settle(subject, options, 'peek');
  }

  async reset(subject: string): Promise<void> {
    const encoded = encodeSubject(checkSubject(subject));
    const own = this.guard === undefined ? this.store.reset(this.target, encoded) : this.guard.reset(encoded);
    const { companions } = this;
    if (companions === undefined) return own;
    await Promise.all([own, ...companions.map((c) => c.reset(subject))]);
  }

  decide(subject: string, cost: number, mode: StoreCall['mode']): Decision | Promise<Decision> {
    const store = this.memory;
    if (store === undefined) return this.decideInStore(subject, cost, mode);
    // The single policy on a MemoryStore: the store's step, straight into the decision. Kept in this
    // one method and small (V8 inlines a hot path only up to a budget of bytecode, and every call
    // spends some): no lease to take here (`memory`), so none of that code either.
    const now = store.clock();
    const step = store.decideSubject(this.only!, this.space!, subject, cost, mode, now);
    // The subject's key (encodeSubject) is what decideSubject found it by: left to a refund to encode.
    const refund =
      step.allowed && mode === 'consume'
        ? giveBackOnce(store, this.target, subject, cost, now, 0, false)
        : undefined;
    return buildOneDecision(this.policies[0]!, step, refund);
  }

  private settle(
    subject: string,
    options: CallOptions | undefined,
    mode: StoreCall['mode'],
  ): Promise<Decision> {
    try {
      const decided = this.decide(checkSubject(subject), costOf(options), mode);
      if (decisionChannel.hasSubscribers && mode === 'consume') {
        if (decided instanceof Promise) return decided.then((d) => this.announceLocal(d));
        this.announceLocal(decided);
      }
      // A promise from the store is returned as it is (Promise.resolve of a native promise is itself).
      return Promise.resolve(decided);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Every other limiter's call: through the guard, or the store's outcome. Apart from the memory path
   * so that the code a hot in-process call runs stays small enough for V8 to inline whole.
   */
  private decideInStore(
    subject: string,
    cost: number,
    mode: StoreCall['mode'],
  ): Decision | Promise<Decision> {
    const leaseId = this.leases === undefined || mode === 'peek' ? 0 : ++this.leaseId;
    const call: StoreCall = { limiter: this.target, subject: encodeSubject(subject), cost, leaseId, mode };
    if (this.guard !== undefined) return this.guard.decide(call);
    const outcome = this.store.consume(call);
    if (outcome instanceof Promise) return outcome.then((o) => this.finish(o, call));
    return this.finish(outcome, call);
  }

  /**
   * Publishes a consume decision taken in process. Not from `decide` itself, whose memory path must
   * stay small enough for V8 to inline (a branch there cost 15% of a decision): `consume` and the HTTP
   * layer call this when somebody listens. A remote store's guard publishes its own, with the latency.
   */
  announceLocal(decision: Decision): Decision {
    if (this.guard === undefined && this.published) publishDecision(this.name, decision);
    return decision;
  }

  /** The decision of a store's outcome; its refund and release go to `refunds`. */
  private finish(
    outcome: StoreOutcome,
    call: StoreCall,
    refunds: Pick<Store, 'refund'> = this.store,
  ): Decision {
    const { steps, now } = outcome;
    const { subject, cost, leaseId } = call;
    const charged = call.mode === 'consume' && steps.every((s) => s.allowed);
    const refund = charged
      ? giveBackOnce(refunds, this.target, subject, cost, now, leaseId, true)
      : undefined;
    const decision = buildDecision(this.policies, steps, refund);
    if (charged && this.leases !== undefined) this.release(decision, subject, cost, now, leaseId, refunds);
    return decision;
  }

  /** Gives a charged decision of a limiter that takes leases its `release`. */
  private release(
    decision: Decision,
    subject: string,
    cost: number,
    chargedAt: number,
    leaseId: number,
    refunds: Pick<Store, 'refund'>,
  ): void {
    decision.release = giveBackOnce(refunds, this.leases!, subject, cost, chargedAt, leaseId, true);
  }
}

/**
 * A function that gives a charge back once; later calls do nothing. The charge is built only then, and
 * the subject encoded then unless it is already (`encoded`). A charge made before its subject's reset
 * gives nothing back: the store sees that (its reset marks), whichever process or limiter object reset
 * the subject.
 */
function giveBackOnce(
  refunds: Pick<Store, 'refund'>,
  limiter: StoreLimiter,
  subject: string,
  cost: number,
  chargedAt: number,
  leaseId: number,
  encoded: boolean,
): () => Promise<void> {
  let done = false;
  return async () => {
    if (done) return;
    done = true;
    const key = encoded ? subject : encodeSubject(subject);
    await refunds.refund({ limiter, subject: key, charge: { cost, chargedAt, leaseId } });
  };
}

/** Builds a limiter; throws SluiceConfigError at once for any option it cannot accept. */
export function createLimiter(options: LimiterOptions): Limiter {
  return new SluiceLimiter(options);
}

/** A limiter Sluice keeps for itself (a ban's strikes and marker): its calls publish no decision. */
export function createInternalLimiter(options: LimiterOptions): Limiter {
  return new SluiceLimiter(options, false);
}

/** Publishes a decision that `limiter.decide` took in process; callers check `decisionChannel.hasSubscribers` first. */
export function announceDecision(limiter: Limiter, decision: Decision): void {
  if (limiter instanceof SluiceLimiter) limiter.announceLocal(decision);
}

/** Makes `limiter`'s reset reset `companions` too (the limiters that keep its ban). */
export function registerCompanions(limiter: Limiter, companions: Limiter[]): void {
  if (!(limiter instanceof SluiceLimiter)) return;
  limiter.companions = [...(limiter.companions ?? []), ...companions];
}

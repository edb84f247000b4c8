import { algorithmNames } from '../algorithms/index.js';
import type { Decision } from '../decision.js';
import { createLimiter } from '../limiter.js';
import type { Policy } from '../options.js';
import type { Store } from '../stores/store.js';
import type { StoreFactory } from './store-parity.js';

/** A window long enough that nothing refills or rolls over while a check runs. */
const LONG_WINDOW = '100d';

/** Policies hit by a burst of concurrent calls, and what each must have left afterwards. */
export interface AtomicityCase {
  readonly label: string;
  readonly policies: readonly Policy[];
  /** Calls of cost 1 that must be allowed in all: the first policy's limit. */
  readonly allowed: number;
  /** What a peek after the burst must report per policy: 0 for the first, the rest untouched by denied calls. */
  readonly remaining: readonly number[];
}

/**
 * Every algorithm alone with `limit`, and three pairs whose first policy binds at `limit` while the
 * second has room to spare: after the burst the second must have exactly that spare left, which it
 * would not if a denied call had charged it (all-or-nothing).
 */
export function atomicityCases(limit = 500): AtomicityCase[] {
  const singles = algorithmNames.map(
    (algorithm): AtomicityCase => ({
      label: algorithm,
      policies: [{ limit, window: LONG_WINDOW, algorithm }],
      allowed: limit,
      remaining: [0],
    }),
  );
  const pair = (first: Policy, second: Policy, spare: number): AtomicityCase => ({
    label: `${first.scope === 'global' ? 'global ' : ''}${first.algorithm} + ${second.algorithm}`,
    policies: [first, { ...second, limit: limit + spare }],
    allowed: limit,
    remaining: [0, spare],
  });
  return [
    ...singles,
    pair(
      { limit, window: LONG_WINDOW, algorithm: 'fixed-window' },
      { limit, window: LONG_WINDOW, algorithm: 'sliding-window' },
      Math.ceil(limit / 5),
    ),
    pair(
      { limit, window: LONG_WINDOW, algorithm: 'sliding-log' },
      { limit, window: LONG_WINDOW, algorithm: 'token-bucket' },
      Math.ceil(limit / 7),
    ),
    pair(
      { limit, window: LONG_WINDOW, algorithm: 'gcra', scope: 'global' },
      { limit, window: LONG_WINDOW, algorithm: 'concurrency' },
      Math.ceil(limit / 10),
    ),
  ];
}

/** One burst: `calls` consumes of cost 1 for `subject`, all in flight at once. */
export interface Burst {
  readonly policies: readonly Policy[];
  readonly prefix: string;
  readonly subject: string;
  readonly calls: number;
}

/** What a burst got back. Plain data, so a process can send it to another. */
export interface BurstResult {
  allowed: number;
  denied: number;
  /** Decided without the store (it failed or was slower than 30 s): must stay 0. */
  degraded: number;
  errors: string[];
}

/** Every burst's limiter name (fireBurst) and the look's that checks their sum: a limiter's default. */
const BURST_NAME = 'default';

/**
 * Fires a burst at `store` and counts the answers. Several processes (or store objects with a
 * connection each) fire theirs at once against one counter; `verifyBurst` checks the sum.
 */
export async function fireBurst(store: Store, burst: Burst): Promise<BurstResult> {
  const { policies, prefix, subject, calls } = burst;
  const limiter = createLimiter({
    policies: [...policies],
    prefix,
    // The default name, given: every burst and the look after them share the counter on purpose
    // (ERR_SLUICE_NAME_REUSE warns of limiters that share one when neither was given a name).
    name: BURST_NAME,
    store,
    // A late answer must show as a failure of the check, never as a quiet local decision.
    onStoreError: 'deny',
    storeTimeout: '30s',
  });
  const result: BurstResult = { allowed: 0, denied: 0, degraded: 0, errors: [] };
  await Promise.all(
    Array.from({ length: calls }, () =>
      limiter.consume(subject).then(
        (d) => {
          if (d.degraded) result.degraded++;
          else if (d.allowed) result.allowed++;
          else result.denied++;
        },
        (error: unknown) => void result.errors.push(String(error)),
      ),
    ),
  );
  return result;
}

/**
 * Checks the bursts fired at one case: exactly `allowed` calls allowed in all, none degraded or
 * failed, and, given `after` (a peek of cost 1 made once every burst is over), every policy left with
 * exactly what the case says. Throws an Error naming what differs.
 */
export function verifyBurst(
  testCase: AtomicityCase,
  results: readonly BurstResult[],
  after?: Decision,
): void {
  const sum = results.reduce(
    (total, r) => ({
      allowed: total.allowed + r.allowed,
      denied: total.denied + r.denied,
      degraded: total.degraded + r.degraded,
      errors: [...total.errors, ...r.errors],
    }),
    { allowed: 0, denied: 0, degraded: 0, errors: [] as string[] },
  );
  const where = `${testCase.label}, ${results.length} bursts`;
  if (sum.errors.length > 0) throw new Error(`${where}: calls failed: ${sum.errors.slice(0, 3).join('; ')}`);
  if (sum.degraded > 0) throw new Error(`${where}: ${sum.degraded} calls were decided without the store`);
  if (sum.allowed !== testCase.allowed) {
    throw new Error(`${where}: ${sum.allowed} calls allowed, where the limit is ${testCase.allowed}`);
  }
  if (after === undefined) return;
  if (after.degraded) throw new Error(`${where}: the peek after the bursts was decided without the store`);
  const left = after.policies.map((p) => p.remaining);
  if (JSON.stringify(left) !== JSON.stringify(testCase.remaining)) {
    throw new Error(
      `${where}: the policies have ${JSON.stringify(left)} left, where ${JSON.stringify(testCase.remaining)} was expected (a denied call charged a policy)`,
    );
  }
}

export interface StoreAtomicityOptions {
  /** The binding limit of every case; default 500. */
  limit?: number;
  /**
   * Store objects made with `makeStore`, each firing its own burst at once; default 4. They must count
   * against one backend (one database, one primary); a remote store's objects should each hold a
   * connection of their own, so that calls race as from separate processes. An in-process store
   * returns one object every time.
   */
  stores?: number;
  /** Calls per store and case; default `limit / 2` (twice the limit in all, with 4 stores). */
  calls?: number;
  /** Default: atomicityCases(limit). */
  cases?: readonly AtomicityCase[];
  /** Key prefix; each case uses its own below it. Default `atomicity-` and a random part. */
  prefix?: string;
}

/** What an atomicity check went through. Plain data. */
export interface StoreAtomicityReport {
  readonly cases: number;
  readonly calls: number;
  readonly allowed: number;
}

/**
 * Proves that a store decides concurrent calls atomically: for every algorithm, many consumes in
 * flight at once from several store objects never get more than the limit allowed, and with two
 * policies a call denied by one charges neither. `makeStore` is given the process's clock (Date.now);
 * a store that reads its own time may ignore it. Rejects with an Error naming the first case that
 * fails. Framework-free, like checkStoreParity.
 */
export async function checkStoreAtomicity(
  makeStore: StoreFactory,
  options: StoreAtomicityOptions = {},
): Promise<StoreAtomicityReport> {
  const {
    limit = 500,
    stores: count = 4,
    cases = atomicityCases(limit),
    prefix = `atomicity-${Math.random().toString(36).slice(2, 10)}`,
  } = options;
  const calls = options.calls ?? Math.ceil(limit / 2);
  const stores = await Promise.all(Array.from({ length: count }, () => makeStore(Date.now)));
  let allowed = 0;
  for (const [index, testCase] of cases.entries()) {
    const burst: Burst = { policies: testCase.policies, prefix: `${prefix}-${index}`, subject: 'hot', calls };
    const results = await Promise.all(stores.map((store) => fireBurst(store, burst)));
    const after = await createLimiter({
      policies: [...testCase.policies],
      prefix: burst.prefix,
      name: BURST_NAME,
      store: stores[0]!,
      storeTimeout: '30s',
      onStoreError: 'deny',
    }).peek(burst.subject);
    verifyBurst(testCase, results, after);
    allowed += testCase.allowed;
  }
  return { cases: cases.length, calls: cases.length * count * calls, allowed };
}

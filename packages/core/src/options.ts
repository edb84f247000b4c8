import type { Algorithm, PolicyParams } from './algorithms/index.js';
import { type AlgorithmName, algorithmNames, algorithms, bucketAlgorithms } from './algorithms/index.js';
import { type Duration, formatDuration, parseDuration } from './duration.js';
import { describeValue, type ErrorCode, ErrorCodes, SluiceConfigError } from './errors.js';
import { foreignOption, PLANS } from './foreign-options.js';
import { invalidStoreMessage } from './foreign-stores.js';
import { emitWarning } from './portable/runtime.js';
import type { Store } from './stores/store.js';

export type OnStoreError = 'local' | 'allow' | 'deny';

export interface Policy {
  /** A positive integer: cost units per window (the refill per window for bucket algorithms). */
  limit: number;
  window: Duration;
  /** Default 'sliding-window'. */
  algorithm?: AlgorithmName;
  /** Default `${limit}-per-${window}`, the window in its largest exact unit. Unique within a limiter. */
  name?: string;
  /** token-bucket, leaky-bucket, gcra: capacity; default = limit. */
  burst?: number;
  /** 'global': one counter shared by every subject of the limiter. Default 'subject'. */
  scope?: 'subject' | 'global';
  /** leaky-bucket only: true (default) holds a request until its slot. */
  delay?: boolean;
}

export interface LimiterOptions {
  policies?: Policy[];
  /** Shorthand for one policy: `{ limit, window, algorithm }` (with `burst`, `delay`, `scope`). */
  limit?: number;
  window?: Duration;
  algorithm?: AlgorithmName;
  burst?: number;
  delay?: boolean;
  scope?: 'subject' | 'global';
  /** Default: a new MemoryStore(). */
  store?: Store;
  /** The resource this limiter guards. Default 'default'. */
  name?: string;
  /** Key namespace. Default 'sluice'. */
  prefix?: string;
  /** Default 'local'. */
  onStoreError?: OnStoreError;
  /** Default 250 ms. */
  storeTimeout?: Duration;
  /**
   * How long a remote store's denial may be answered in process at most; default 1 s, 0 turns the
   * deny cache off. Bounds how long a reset or refund made elsewhere can go unseen.
   */
  denyCacheMs?: Duration;
}

/** A policy, parsed. */
export interface PolicyConfig {
  readonly name: string;
  readonly algorithm: AlgorithmName;
  readonly step: Algorithm;
  readonly params: PolicyParams;
  readonly limit: number;
  readonly windowMs: number;
  readonly scope: 'subject' | 'global';
  readonly delay: boolean;
}

/** Options parsed once into a frozen whole. */
export interface LimiterConfig {
  readonly name: string;
  readonly prefix: string;
  readonly policies: readonly PolicyConfig[];
  readonly store: Store | undefined;
  readonly onStoreError: OnStoreError;
  readonly storeTimeoutMs: number;
  readonly denyCacheMs: number;
}

/** The option names of a limiter (the HTTP layer tells them from its own). */
export const LIMITER_KEYS: ReadonlySet<string> = new Set([
  'policies',
  'limit',
  'window',
  'algorithm',
  'burst',
  'delay',
  'scope',
  'store',
  'name',
  'prefix',
  'onStoreError',
  'storeTimeout',
  'denyCacheMs',
]);
const SHORTHAND_KEYS = ['limit', 'window', 'algorithm', 'burst', 'delay', 'scope'] as const;
/** What a plan (the HTTP `plans` option) may set: its policies, as `policies` or the shorthand. */
export const PLAN_KEYS: ReadonlySet<string> = new Set(['policies', ...SHORTHAND_KEYS]);
const POLICY_KEYS = new Set(['limit', 'window', 'algorithm', 'name', 'burst', 'scope', 'delay']);
/** Products of counts and milliseconds stay below this, so integer arithmetic stays exact. */
const MAX_EXACT = 2 ** 50;

export function fail(code: ErrorCode, option: string, message: string): never {
  throw new SluiceConfigError(code, option, message);
}

/** Edit distance, for a typo's nearest valid option. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      const same = a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase();
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (same ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The nearest of `valid` to a typo `key`, if anything is close enough to say so. */
function nearest(key: string, valid: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(key.length / 3)) + 1;
  for (const name of valid) {
    const d = distance(key, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * Throws for keys of `options` that are not in `known`, every one of them in the one error (`option`
 * names the first): each says what to write instead (another library's name, with the new shape
 * where it differs, or the nearest option for a typo) or what to do instead, and the message lists
 * the options valid here, with `extra`, the options of the adapter at that place (Fastify's `global`,
 * `hook`).
 */
export function rejectUnknown(
  options: object,
  known: ReadonlySet<string>,
  where: string,
  extra: readonly string[] = [],
): void {
  rejectUnknownIn([[options, where]], known, extra);
}

/**
 * rejectUnknown over several objects of one kind (every policy of a limiter), in one error: a
 * @nestjs/throttler list pasted as policies has a `ttl` in each, and one per run took a run each.
 */
export function rejectUnknownIn(
  entries: readonly (readonly [object, string])[],
  known: ReadonlySet<string>,
  extra: readonly string[] = [],
): void {
  const valid = [...known, ...extra];
  const path = (where: string, key: string) => (where ? `${where}.${key}` : key);
  const unknown = entries.flatMap(([options, where]) =>
    Object.keys(options)
      .filter((key) => !known.has(key))
      .map((key) => ({
        option: path(where, key),
        hint: hintFor(key, (options as Record<string, unknown>)[key], valid),
      })),
  );
  if (unknown.length === 0) return;
  const [first, ...others] = unknown;
  const also = others.map(({ option, hint }) => `${option}: unknown option${hint}; `).join('');
  fail(
    ErrorCodes.UNKNOWN_OPTION,
    first!.option,
    `unknown option${first!.hint}; ${also}the options here are ${valid.join(', ')}`,
  );
}

/** The hint of an unknown option `key` (starting '; ', or empty): what to write or do instead. */
function hintFor(key: string, value: unknown, valid: readonly string[]): string {
  const foreign = foreignOption(key, value);
  if (foreign?.core !== undefined && foreign.to !== undefined && !valid.includes(foreign.to))
    return `; ${foreign.core}`;
  if (foreign !== undefined && (foreign.to === undefined || valid.includes(foreign.to))) {
    const instead = foreign.to === undefined ? '' : `; write \`${foreign.to}\` instead`;
    if (foreign.note === undefined) return instead;
    return foreign.to === undefined ? `; ${foreign.note}` : `${instead}: ${foreign.note}`;
  }
  const typo = nearest(key, valid);
  return typo === undefined ? '' : `; write \`${typo}\` instead`;
}

export function expectObject(value: unknown, option: string): asserts value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(ErrorCodes.INVALID_OPTION, option, `expected an object; got ${describeValue(value)}`);
  }
}

export function positiveInteger(value: unknown, option: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    fail(ErrorCodes.INVALID_LIMIT, option, `expected a positive integer; got ${describeValue(value)}`);
  }
  return value;
}

export function oneOf<T extends string>(
  value: unknown,
  choices: readonly T[],
  option: string,
  code: ErrorCode = ErrorCodes.INVALID_OPTION,
): T {
  if (!choices.includes(value as T)) {
    fail(
      code,
      option,
      `expected one of ${choices.map((c) => `'${c}'`).join(', ')}; got ${describeValue(value)}`,
    );
  }
  return value as T;
}

export function nonEmptyString(value: unknown, option: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 256) {
    fail(
      ErrorCodes.INVALID_OPTION,
      option,
      `expected a non-empty string of at most 256 characters; got ${describeValue(value)}`,
    );
  }
  return value;
}

/** Windows already warned of (once per value: a policy set reused for many limiters says it once). */
const secondsWarned = new Set<number>();

/**
 * A window of a bare number under 1,000 is milliseconds, and almost always seconds meant
 * (rate-limiter-flexible's duration, @nestjs/throttler 5's ttl): `window: 60` refills 60 times as fast
 * as meant, and nothing else would say so. A warning, not an error: sub-second windows are legitimate,
 * and written as a string ('60ms') they are not warned of.
 */
function warnIfSeconds(windowMs: number, option: string): void {
  if (windowMs >= 1000 || secondsWarned.has(windowMs)) return;
  secondsWarned.add(windowMs);
  emitWarning(
    `${option}: ${windowMs} is ${windowMs} milliseconds. If seconds were meant (rate-limiter-flexible's duration, @nestjs/throttler 5's ttl), write '${windowMs}s' (or ${windowMs * 1000}); if milliseconds are, write '${windowMs}ms', which is not warned of.`,
    ErrorCodes.WINDOW_IN_SECONDS,
  );
}

function parsePolicy(raw: unknown, option: string): PolicyConfig {
  expectObject(raw, option);
  rejectUnknown(raw, POLICY_KEYS, option);
  if (typeof raw.limit === 'function')
    fail(
      ErrorCodes.INVALID_LIMIT,
      `${option}.limit`,
      `expected a positive integer; got a function: ${PLANS}`,
    );
  const limit = positiveInteger(raw.limit, `${option}.limit`);
  if (raw.window === undefined) fail(ErrorCodes.INVALID_DURATION, `${option}.window`, 'is required');
  const windowMs = parseDuration(raw.window, `${option}.window`);
  if (typeof raw.window === 'number') warnIfSeconds(windowMs, `${option}.window`);
  const algorithm =
    raw.algorithm === undefined
      ? 'sliding-window'
      : oneOf(raw.algorithm, algorithmNames, `${option}.algorithm`, ErrorCodes.INVALID_ALGORITHM);
  let burst = limit;
  if (raw.burst !== undefined) {
    if (!bucketAlgorithms.has(algorithm)) {
      fail(
        ErrorCodes.INVALID_POLICY,
        `${option}.burst`,
        `only token-bucket, leaky-bucket and gcra take a burst, not ${algorithm}`,
      );
    }
    burst = positiveInteger(raw.burst, `${option}.burst`);
  }
  let delay = false;
  if (raw.delay !== undefined) {
    if (algorithm !== 'leaky-bucket')
      fail(ErrorCodes.INVALID_POLICY, `${option}.delay`, `only leaky-bucket takes delay, not ${algorithm}`);
    if (typeof raw.delay !== 'boolean')
      fail(
        ErrorCodes.INVALID_OPTION,
        `${option}.delay`,
        `expected a boolean; got ${describeValue(raw.delay)}`,
      );
    delay = raw.delay;
  } else delay = algorithm === 'leaky-bucket';
  const scope =
    raw.scope === undefined ? 'subject' : oneOf(raw.scope, ['subject', 'global'] as const, `${option}.scope`);
  if (Math.max(limit, burst) * windowMs > MAX_EXACT) {
    fail(
      ErrorCodes.INVALID_LIMIT,
      option,
      `limit (or burst) times window is too large to count exactly (at most 2^50)`,
    );
  }
  const name =
    raw.name !== undefined
      ? nonEmptyString(raw.name, `${option}.name`)
      : algorithm === 'concurrency'
        ? `${limit}-concurrent`
        : `${limit}-per-${formatDuration(windowMs)}`;
  return Object.freeze({
    name,
    algorithm,
    step: algorithms[algorithm],
    params: Object.freeze({ limit, windowMs, burst }),
    limit,
    windowMs,
    scope,
    delay,
  });
}

function isStore(value: unknown): value is Store {
  const store = value as Store;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof store.consume === 'function' &&
    typeof store.refund === 'function' &&
    typeof store.reset === 'function' &&
    typeof store.local === 'boolean'
  );
}

/** Options -> frozen config. Every SluiceConfigError of a limiter is thrown here. */
export function parseLimiterOptions(options: unknown): LimiterConfig {
  expectObject(options, 'options');
  rejectUnknown(options, LIMITER_KEYS, '');
  const shorthand = SHORTHAND_KEYS.filter((key) => options[key] !== undefined);
  let policies: PolicyConfig[];
  if (options.policies !== undefined) {
    if (shorthand.length > 0) {
      fail(
        ErrorCodes.NO_POLICY,
        shorthand[0]!,
        'give either `policies` or the shorthand `{ limit, window, algorithm }`, not both',
      );
    }
    if (!Array.isArray(options.policies) || options.policies.length === 0) {
      fail(
        ErrorCodes.NO_POLICY,
        'policies',
        `expected a non-empty array of policies; got ${describeValue(options.policies)}`,
      );
    }
    // Every policy's unknown options first, in one error; then each policy in order.
    rejectUnknownIn(
      options.policies.flatMap((p, i) =>
        typeof p === 'object' && p !== null && !Array.isArray(p) ? [[p, `policies[${i}]`] as const] : [],
      ),
      POLICY_KEYS,
    );
    // Array.from visits holes too: a sparse array's missing policy is an error, not a skipped slot.
    policies = Array.from(options.policies, (p, i) => parsePolicy(p, `policies[${i}]`));
  } else if (shorthand.length > 0) {
    const policy: Record<string, unknown> = {};
    for (const key of shorthand) policy[key] = options[key];
    policies = [parsePolicy(policy, 'options')];
  } else {
    fail(ErrorCodes.NO_POLICY, 'policies', 'a limiter needs `policies` or the shorthand `{ limit, window }`');
  }
  const seen = new Set<string>();
  policies.forEach((p, i) => {
    if (seen.has(p.name))
      fail(ErrorCodes.DUPLICATE_POLICY, `policies[${i}].name`, `"${p.name}" is used by an earlier policy`);
    seen.add(p.name);
  });
  if (options.store !== undefined && !isStore(options.store)) {
    fail(ErrorCodes.INVALID_STORE, 'store', invalidStoreMessage(options.store));
  }
  const prefix = options.prefix === undefined ? 'sluice' : nonEmptyString(options.prefix, 'prefix');
  if (/[{}]/.test(prefix))
    fail(
      ErrorCodes.INVALID_OPTION,
      'prefix',
      'must not contain { or }: they would move the Redis Cluster hash tag',
    );
  return Object.freeze({
    name: options.name === undefined ? 'default' : nonEmptyString(options.name, 'name'),
    prefix,
    policies: Object.freeze(policies),
    store: options.store as Store | undefined,
    onStoreError:
      options.onStoreError === undefined
        ? 'local'
        : oneOf(options.onStoreError, ['local', 'allow', 'deny'] as const, 'onStoreError'),
    storeTimeoutMs:
      options.storeTimeout === undefined ? 250 : parseDuration(options.storeTimeout, 'storeTimeout'),
    denyCacheMs: parseDenyCacheMs(options.denyCacheMs),
  });
}

/** A duration, or 0 for no deny cache; default 1 s. */
function parseDenyCacheMs(value: unknown): number {
  if (value === undefined) return 1000;
  if (value === 0) return 0;
  return parseDuration(value, 'denyCacheMs');
}

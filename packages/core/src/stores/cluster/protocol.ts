/**
 * The messages a ClusterStore worker and its primary exchange over Node's IPC channel. The channel is
 * the app's too (cluster's default 'json' serialization), so every message of Sluice carries the tag
 * below, and each side ignores what does not. Kept small: a call names its limiter by a number, and
 * the limiter's policies travel only until the primary has acknowledged them.
 */
import { type AlgorithmName, algorithms } from '../../algorithms/index.js';
import type { PolicyOutcome, StoreLimiter, StorePolicy } from '../store.js';

/** The tag property and its value: protocol version 1. */
export const TAG = 'sluice';
export const TAG_VALUE = 'cluster/1';

/** consume, peek, refund, reset. */
export type Op = 'c' | 'p' | 'f' | 'r';

/** A limiter's policies as plain data: `[algorithm, limit, windowMs, burst, global (1) or subject (0), namespace]`. */
export type PolicyDef = [AlgorithmName, number, number, number, 0 | 1, string];

/** A StoreLimiter as plain data: what the primary rebuilds its policies from (algorithms are values). */
export interface LimiterDef {
  readonly prefix: string;
  readonly name: string;
  readonly global: boolean;
  readonly policies: PolicyDef[];
}

/** One store call, worker to primary: sent alone as a `Request`, or among a turn's in `Calls`. */
export interface Call {
  /** Correlates the answer; unique among this worker's calls in flight. */
  readonly id: number;
  readonly op: Op;
  /** The limiter, by this worker's number for it. */
  readonly lim: number;
  /** The limiter's policies, sent until the primary has answered a call of it. */
  readonly def?: LimiterDef;
  /** The encoded subject. */
  readonly sub: string;
  /** consume and peek: the cost; refund: the cost charged. */
  readonly n?: number;
  /** consume: the lease id; refund: the charge's. */
  readonly lease?: number;
  /** refund: when the charge was made, on the primary's clock. */
  readonly at?: number;
  /**
   * consume and peek: when the worker gives the call up (Date.now, one machine's wall clock). The
   * primary does not run a call it receives later: nobody waits for it, and it would charge.
   */
  readonly exp?: number;
}

/** Worker to primary: one store call as a message of its own. */
export type Request = Call & { readonly [TAG]: typeof TAG_VALUE };

/** Why the primary could not run a call (the call changed nothing). */
export type Refusal = 'unknown-limiter' | 'bad-request' | 'expired' | 'failed';

/** Primary to worker: the answer to one call, sent alone as a `Reply`, or among others in `Replies`. */
export interface Answer {
  readonly id: number;
  /** consume and peek: the primary's clock when it decided. */
  readonly now?: number;
  /** consume and peek: five numbers per policy (see encodeSteps). */
  readonly steps?: number[];
  /** Set when the call was not run. */
  readonly err?: Refusal;
  /** With `err`: what went wrong, for the store-error diagnostics. */
  readonly msg?: string;
}

/** Primary to worker: the answer to a lone `Request`, as a message of its own. */
export interface Reply extends Answer {
  readonly [TAG]: typeof TAG_VALUE;
  /**
   * Set on the answer to a lone call by a primary that reads `Calls`. A primary of a release before
   * them ignores a `Calls` (it has no id), and a rolling restart forks new workers beside the old
   * primary: so a worker sends each call alone until it has seen this mark or a `Replies`.
   */
  readonly b?: 1;
}

/**
 * The calls a worker made in one turn of its event loop, sent as one message (one IPC write and one
 * JSON parse on each side, instead of one per call); answered by one `Replies`. Sent only to a primary
 * that has said it reads them (`Reply.b`); a lone call travels as a `Request`, understood by every
 * release of this protocol version. The message is tagged, its calls are not: only a message reaches
 * the app's listeners, and the tag would be a fifth of each call's bytes.
 */
export interface Calls {
  readonly [TAG]: typeof TAG_VALUE;
  readonly calls: Call[];
}

/** Primary to worker: the answers to one `Calls`, in its order, untagged as its calls are. */
export interface Replies {
  readonly [TAG]: typeof TAG_VALUE;
  readonly replies: Answer[];
}

/** True for a message of Sluice's cluster protocol (either direction). */
export function isTagged(message: unknown): boolean {
  return (
    typeof message === 'object' && message !== null && (message as Record<string, unknown>)[TAG] === TAG_VALUE
  );
}

export function describeLimiter(limiter: StoreLimiter): LimiterDef {
  return {
    prefix: limiter.prefix,
    name: limiter.name,
    global: limiter.hasGlobalPolicy ?? limiter.policies.some((p) => p.scope === 'global'),
    policies: limiter.policies.map((p) => [
      p.algorithm.name,
      p.params.limit,
      p.params.windowMs,
      p.params.burst,
      p.scope === 'global' ? 1 : 0,
      p.namespace,
    ]),
  };
}

const positive = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

/**
 * The StoreLimiter a worker described, or undefined when the description is malformed: a worker's
 * message never reaches the store unchecked, whatever the worker runs.
 */
export function rebuildLimiter(def: unknown): StoreLimiter | undefined {
  if (typeof def !== 'object' || def === null) return undefined;
  const { prefix, name, global, policies } = def as Record<string, unknown>;
  if (typeof prefix !== 'string' || typeof name !== 'string' || typeof global !== 'boolean') return undefined;
  if (!Array.isArray(policies) || policies.length === 0) return undefined;
  const rebuilt: StorePolicy[] = [];
  for (const p of policies as unknown[]) {
    if (!Array.isArray(p) || p.length !== 6) return undefined;
    const [algorithmName, limit, windowMs, burst, scope, namespace] = p;
    if (!Object.hasOwn(algorithms, algorithmName)) return undefined;
    if (!positive(limit) || !positive(windowMs) || !positive(burst)) return undefined;
    if ((scope !== 0 && scope !== 1) || typeof namespace !== 'string') return undefined;
    rebuilt.push(
      Object.freeze({
        algorithm: algorithms[algorithmName as AlgorithmName],
        params: Object.freeze({ limit, windowMs, burst }),
        scope: scope === 1 ? 'global' : 'subject',
        namespace,
      }),
    );
  }
  return Object.freeze({ prefix, name, policies: Object.freeze(rebuilt), hasGlobalPolicy: global });
}

/** Fields of one policy's outcome on the wire, in this order. */
const STEP_FIELDS = 5;

/**
 * JSON has no Infinity (it would arrive as null), and a retry that never comes is Infinity: every
 * field is a count or a duration, never negative, so -1 stands for it.
 */
const wire = (value: number): number => (value === Number.POSITIVE_INFINITY ? -1 : value);
const unwire = (value: number): number => (value === -1 ? Number.POSITIVE_INFINITY : value);

/** `[allowed (1 or 0), remaining, resetMs, retryAfterMs, delayMs]` per policy, one flat array. */
export function encodeSteps(steps: readonly PolicyOutcome[]): number[] {
  const flat: number[] = new Array(steps.length * STEP_FIELDS);
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    const at = i * STEP_FIELDS;
    flat[at] = s.allowed ? 1 : 0;
    flat[at + 1] = wire(s.remaining);
    flat[at + 2] = wire(s.resetMs);
    flat[at + 3] = wire(s.retryAfterMs);
    flat[at + 4] = wire(s.delayMs);
  }
  return flat;
}

/** The outcomes of `count` policies; undefined when `flat` does not hold them. */
export function decodeSteps(flat: unknown, count: number): PolicyOutcome[] | undefined {
  if (!Array.isArray(flat) || flat.length !== count * STEP_FIELDS) return undefined;
  if (!flat.every((v) => typeof v === 'number')) return undefined;
  const numbers = flat as number[];
  const steps: PolicyOutcome[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const at = i * STEP_FIELDS;
    steps[i] = {
      allowed: numbers[at] === 1,
      remaining: unwire(numbers[at + 1]!),
      resetMs: unwire(numbers[at + 2]!),
      retryAfterMs: unwire(numbers[at + 3]!),
      delayMs: unwire(numbers[at + 4]!),
    };
  }
  return steps;
}

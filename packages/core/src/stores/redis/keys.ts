import { markLifeMs, markOf, type StoreLimiter } from '../store.js';
import { takesBurst } from './script.js';

/**
 * Redis keys of a limiter: `${namespace}:{${tag}}` with the policy's namespace (prefix, limiter, policy,
 * algorithm code: keys.ts) and a Redis Cluster hash tag that puts every key of one call in one slot.
 *
 * - Subject-scoped policies of a limiter without global policies: `${namespace}:{${subject}}`, the
 *   subject's tag, so subjects spread over the cluster.
 * - A limiter with a global policy: every key carries the limiter's tag `{%@${name}}`, so one call's
 *   keys still share a slot; the global key is `${namespace}:{%@${name}}` and a subject's key
 *   `${namespace}:{%@${name}}:${subject}`. Every call of such a limiter goes to one slot (a hot slot).
 *
 * Why keys cannot collide: namespaces hold no brace (names are escaped, the prefix is checked), so the
 * first `{` opens the tag, and the tag holds no `}` (encoded subjects and names never do). An encoded
 * subject never holds `%` but in an escape (`%` then a hex digit or `u`), so no subject's tag is `%@…`
 * (a limiter's) or `%` (the empty subject's, which Redis would not take as a tag).
 */

/** Keys and script arguments of one limiter, computed once. */
export interface KeyPlan {
  /** Number of policies. */
  readonly size: number;
  /** Appends to `into` one key per policy for `subject` (encoded). */
  keys(subject: string, into: Array<string | number>): void;
  /** The hash tag of the subject's keys: calls with the same tag may share a script run on a cluster. */
  tagOf(subject: string): string;
  /** Appends to `into` the reset mark of each policy's key for `subject` (markOf): what a refund reads. */
  marks(subject: string, into: Array<string | number>): void;
  /**
   * The subject's keys of the subject-scoped policies, then their reset marks: what `reset` deletes
   * and writes. Empty when the limiter has no subject-scoped policy.
   */
  subjectKeys(subject: string): Array<string | number>;
  /** How long each subject-scoped policy's reset mark lives (markLifeMs), in subjectKeys' order. */
  readonly markLives: readonly string[];
  /** Script arguments describing the policies: algorithm code, limit, windowMs (and burst) of each. */
  readonly params: readonly string[];
}

const plans = new WeakMap<StoreLimiter, KeyPlan>();

/** The plan of a limiter, cached on the limiter object: a call does no string work but its subject's. */
export function planOf(limiter: StoreLimiter): KeyPlan {
  let plan = plans.get(limiter);
  if (plan === undefined) {
    plan = makePlan(limiter);
    plans.set(limiter, plan);
  }
  return plan;
}

/** The hash tag's content for an encoded subject; Redis ignores an empty `{}`, so '' gets '%'. */
export function subjectTag(subject: string): string {
  return subject === '' ? '%' : subject;
}

function makePlan(limiter: StoreLimiter): KeyPlan {
  const { policies } = limiter;
  const size = policies.length;
  const params: string[] = [];
  for (const { algorithm, params: p } of policies) {
    params.push(algorithm.code, String(p.limit), String(p.windowMs));
    if (takesBurst(algorithm.code)) params.push(String(p.burst));
  }
  const hasGlobal = limiter.hasGlobalPolicy ?? policies.some((p) => p.scope === 'global');
  // The key up to where the subject goes, and whether the subject goes there at all.
  const takesSubject = policies.map((p) => p.scope === 'subject');
  const tag = `{%@${limiter.name}}`;
  const headOf = (namespace: string, i: number) =>
    !hasGlobal ? `${namespace}:{` : takesSubject[i] ? `${namespace}:${tag}:` : `${namespace}:${tag}`;
  const heads = policies.map((p, i) => headOf(p.namespace, i));
  const markHeads = policies.map((p, i) => headOf(markOf(p.namespace), i));
  const keyFrom = hasGlobal
    ? (from: string[], i: number, subject: string) => (takesSubject[i] ? from[i]! + subject : from[i]!)
    : (from: string[], i: number, subject: string) => `${from[i]!}${subjectTag(subject)}}`;
  const keyOf = (i: number, subject: string) => keyFrom(heads, i, subject);
  const markLives: string[] = [];
  for (let i = 0; i < size; i++) if (takesSubject[i]) markLives.push(String(markLifeMs(policies[i]!.params)));
  return {
    size,
    params,
    keys(subject, into) {
      for (let i = 0; i < size; i++) into.push(keyOf(i, subject));
    },
    tagOf: hasGlobal ? () => tag : subjectTag,
    marks(subject, into) {
      for (let i = 0; i < size; i++) into.push(keyFrom(markHeads, i, subject));
    },
    subjectKeys(subject) {
      const keys: Array<string | number> = [];
      for (let i = 0; i < size; i++) if (takesSubject[i]) keys.push(keyOf(i, subject));
      for (let i = 0; i < size; i++) if (takesSubject[i]) keys.push(keyFrom(markHeads, i, subject));
      return keys;
    },
    markLives,
  };
}

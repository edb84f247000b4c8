import type { Decision, PolicyInfo, PolicyState } from '../decision.js';

/**
 * The RateLimit header fields. What depends only on the policies (names, quotas, windows) is
 * formatted once per limiter; a request only fills in its numbers.
 *
 * - draft-10 (draft-ietf-httpapi-ratelimit-headers-10): every policy, as structured-field lists:
 *   `RateLimit-Policy: "burst";q=10;w=1, "hourly";q=1000;w=3600`, `RateLimit: "burst";r=9;t=1, …`.
 * - draft-8 (-08, what express-rate-limit 8 recommends): the same two fields, written the same way:
 *   -08 already has the String item with `q`, `qu`, `w` and `r`, `t` that -10 kept.
 * - draft-7: the binding policy: `RateLimit-Policy: 10;w=1`, `RateLimit: limit=10, remaining=9, reset=1`.
 * - draft-6: the binding policy: `RateLimit-Policy`, `RateLimit-Limit`, `-Remaining`, `-Reset`.
 * - legacy: `X-RateLimit-Limit`, `-Remaining`, `-Reset` (epoch seconds: when the decision was made
 *   plus its resetMs), for the binding policy.
 * Seconds are whole and rounded up (a window under a second is announced as 1 s).
 */
export type HeaderMode = 'draft-10' | 'draft-8' | 'draft-7' | 'draft-6' | false;

/** Whether `mode` lists every policy (draft-10 and draft-8) rather than the binding one. */
export function listsEveryPolicy(mode: HeaderMode): mode is 'draft-10' | 'draft-8' {
  return mode === 'draft-10' || mode === 'draft-8';
}

/**
 * The remaining quota as advertised: never above the quota `q` (API.md r3). A bucket whose `burst`
 * exceeds its `limit` holds more than `limit`; `q;w` keeps saying the sustained rate (`limit` per
 * `window`) and the headroom above it goes unadvertised, so `q - r` (what a client has used) is never
 * negative, and one spending `r` at once is never refused. The decision itself keeps the true count.
 */
export function shownRemaining(remaining: number, limit: number): number {
  return Math.min(remaining, limit);
}

/** Writes a decision's fields into `into`. */
export type HeaderWriter = (decision: Decision, into: Record<string, string>) => void;

/**
 * When each decision was made, on the clock its store decides by, for the one field that is an
 * instant rather than a duration: X-RateLimit-Reset. Taken when the header is written instead, the
 * instant is a moment late (the memory store's shared reading of Date.now lags it; a stacked limiter
 * rewrites an earlier limiter's decision later still), and a window that ends on a whole second reads
 * one second late. Recorded by the HTTP handler, and only for limiters that send legacy fields.
 */
const decidedAt = new WeakMap<Decision, number>();

/** Records that `decision` was made at `at` (ms since the epoch, on its store's clock). */
export function recordDecisionTime(decision: Decision, at: number): void {
  decidedAt.set(decision, at);
}

/** Whole seconds, rounded up. */
export function seconds(ms: number): number {
  return Math.ceil(ms / 1000);
}

/** Retry-After in whole seconds, rounded up, at least 1; undefined when no retry would ever succeed. */
export function retryAfterSeconds(retryAfterMs: number): number | undefined {
  return Number.isFinite(retryAfterMs) ? Math.max(1, seconds(retryAfterMs)) : undefined;
}

/** A policy name as a structured-field string: quoted, `"` and `\` escaped, non-ASCII replaced. */
export function sfString(name: string): string {
  return `"${name.replace(/[\\"]/g, '\\$&').replace(/[^\x20-\x7e]/g, '?')}"`;
}

/** A policy as draft-10's RateLimit-Policy lists it (a concurrency policy: no window, a quota unit). */
export function policyItem(p: Pick<PolicyState, 'name' | 'algorithm' | 'limit' | 'windowMs'>): string {
  return p.algorithm === 'concurrency'
    ? `${sfString(p.name)};q=${p.limit};qu="concurrent-requests"`
    : `${sfString(p.name)};q=${p.limit};w=${seconds(p.windowMs)}`;
}

/** A policy's state as draft-10's RateLimit lists it (a concurrency policy: no `t`). */
export function stateItem(
  p: Pick<PolicyState, 'name' | 'algorithm' | 'limit' | 'remaining' | 'resetMs'>,
): string {
  const t = p.algorithm === 'concurrency' ? '' : `;t=${seconds(p.resetMs)}`;
  return `${sfString(p.name)};r=${shownRemaining(p.remaining, p.limit)}${t}`;
}

/** draft-7 and draft-6's RateLimit-Policy of one policy (a concurrency policy: its limit alone). */
export function shortPolicy(p: Pick<PolicyState, 'algorithm' | 'limit' | 'windowMs'>): string {
  return p.algorithm === 'concurrency' ? String(p.limit) : `${p.limit};w=${seconds(p.windowMs)}`;
}

/** Builds the writer for one limiter's policies; undefined when no field is sent at all. */
export function headerWriter(
  mode: HeaderMode,
  legacy: boolean,
  policies: readonly PolicyInfo[],
): HeaderWriter | undefined {
  const quoted = policies.map((p) => sfString(p.name));
  // A concurrency policy limits requests in flight, not a rate: a quota unit and no window or reset.
  const concurrent = policies.map((p) => p.algorithm === 'concurrency');
  const short = new Map(policies.map((p) => [p.name, shortPolicy(p)]));
  const policyList = policies.map(policyItem).join(', ');

  let standard: HeaderWriter | undefined;
  if (listsEveryPolicy(mode)) {
    standard = (d, into) => {
      let value = '';
      const states = d.policies;
      for (let i = 0; i < states.length; i++) {
        const s = states[i]!;
        const t = concurrent[i] ? '' : `;t=${seconds(s.resetMs)}`;
        value += `${i === 0 ? '' : ', '}${quoted[i]};r=${shownRemaining(s.remaining, s.limit)}${t}`;
      }
      into['RateLimit-Policy'] = policyList;
      into.RateLimit = value;
    };
  } else if (mode === 'draft-7') {
    standard = (d, into) => {
      const policy = short.get(d.policy);
      if (policy !== undefined) into['RateLimit-Policy'] = policy;
      into.RateLimit = `limit=${d.limit}, remaining=${shownRemaining(d.remaining, d.limit)}, reset=${seconds(d.resetMs)}`;
    };
  } else if (mode === 'draft-6') {
    standard = (d, into) => {
      const policy = short.get(d.policy);
      if (policy !== undefined) into['RateLimit-Policy'] = policy;
      into['RateLimit-Limit'] = String(d.limit);
      into['RateLimit-Remaining'] = String(shownRemaining(d.remaining, d.limit));
      into['RateLimit-Reset'] = String(seconds(d.resetMs));
    };
  }
  if (!legacy) return standard;
  const legacyWriter: HeaderWriter = (d, into) => {
    into['X-RateLimit-Limit'] = String(d.limit);
    into['X-RateLimit-Remaining'] = String(shownRemaining(d.remaining, d.limit));
    // A decision with no recorded time (made by a handler without legacy fields) is taken as made now.
    into['X-RateLimit-Reset'] = String(seconds((decidedAt.get(d) ?? Date.now()) + d.resetMs));
  };
  if (standard === undefined) return legacyWriter;
  const both = standard;
  return (d, into) => {
    both(d, into);
    legacyWriter(d, into);
  };
}

import type { Decision } from '../decision.js';
import { type HeaderMode, listsEveryPolicy, policyItem, shortPolicy, stateItem } from './headers.js';

/**
 * Several limiters on one request (an app-wide one and a route's own): each adds to what the ones
 * before it sent (API.md r2). draft-10 fields list every policy of every limiter that decided, in
 * order; the single-policy fields (draft-7, draft-6, legacy) describe the binding policy over all of
 * them: a refusal wins, else the fewest remaining.
 *
 * What the limiters before sent is rebuilt from the decision the adapter put on the request
 * (`req.rateLimit`, read through `RequestReader.previous`), so a request that meets one limiter costs
 * nothing here but that read. Only from the second limiter on is the merged state kept, by request.
 */
interface Merged {
  readonly policyList: string;
  readonly rateLimit: string;
  /** The binding decision over every limiter so far. */
  readonly binding: Decision;
  /** The decision of the last limiter that decided: a later one merges onto this state only after it. */
  readonly last: Decision;
}

const merged = new WeakMap<object, Merged>();
let handlers = 0;

/** Counts an HTTP handler: with one in the process no request can meet two, and none is looked at. */
export function countHandler(): void {
  handlers++;
}

/** Whether a request may have met another limiter before this one. */
export function mayStack(): boolean {
  return handlers > 1;
}

/** Whether `earlier` binds over `decision`: a refusal wins, then the longer retry, else the fewest remaining. */
function binds(earlier: Decision, decision: Decision): boolean {
  if (earlier.allowed !== decision.allowed) return !earlier.allowed;
  if (!decision.allowed) return earlier.retryAfterMs > decision.retryAfterMs;
  return earlier.remaining < decision.remaining;
}

/**
 * Merges into `headers` (this limiter's fields for `decision`, written by `write`) what the limiters
 * before it on `req` sent; `previous` is the decision the last of them put on the request.
 */
export function stack(
  req: object,
  previous: Decision,
  mode: HeaderMode,
  decision: Decision,
  headers: Record<string, string>,
  write: (d: Decision, into: Record<string, string>) => void,
): void {
  const kept = merged.get(req);
  const before: Merged =
    kept !== undefined && kept.last === previous
      ? kept
      : {
          policyList: previous.policies.map(policyItem).join(', '),
          rateLimit: previous.policies.map(stateItem).join(', '),
          binding: previous,
          last: previous,
        };
  const earlierBinds = binds(before.binding, decision);
  if (listsEveryPolicy(mode)) {
    headers['RateLimit-Policy'] = `${before.policyList}, ${headers['RateLimit-Policy']}`;
    headers.RateLimit = `${before.rateLimit}, ${headers.RateLimit}`;
  }
  // The single-policy fields (and legacy ones) of the binding decision, this limiter's way.
  if (earlierBinds) {
    const lists = listsEveryPolicy(mode);
    const draft10 = lists ? { p: headers['RateLimit-Policy'], r: headers.RateLimit } : undefined;
    write(before.binding, headers);
    if (!lists && mode !== false) {
      const binding = before.binding.policies.find((p) => p.name === before.binding.policy);
      if (binding !== undefined) headers['RateLimit-Policy'] = shortPolicy(binding);
    }
    if (draft10 !== undefined) {
      headers['RateLimit-Policy'] = draft10.p!;
      headers.RateLimit = draft10.r!;
    }
  }
  merged.set(req, {
    policyList: headers['RateLimit-Policy'] ?? before.policyList,
    rateLimit: headers.RateLimit ?? before.rateLimit,
    binding: earlierBinds ? before.binding : decision,
    last: decision,
  });
}

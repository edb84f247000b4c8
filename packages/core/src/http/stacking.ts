import type { Decision } from '../decision.js';
import type { HeaderMode } from './headers.js';

/**
 * Several limiters on one request (an app-wide one and a route's own): each adds to what the ones
 * before it sent (API.md r2). draft-10 fields list every policy of every limiter that decided, in
 * order; the single-policy fields (draft-7, draft-6, legacy) describe the binding policy over all of
 * them: a refusal wins, else the fewest remaining. Fields of another draft than the last limiter's
 * are replaced, not merged.
 */
interface Sent {
  readonly mode: HeaderMode;
  readonly legacy: boolean;
  /** Every field sent so far, merged. */
  readonly headers: Readonly<Record<string, string>>;
  /** The binding decision's numbers so far. */
  readonly allowed: boolean;
  readonly remaining: number;
  readonly retryAfterMs: number;
}

/** By request object (Express `req`, Fastify `request`, Koa `ctx`, Hono `c`): one per request. */
const sent = new WeakMap<object, Sent>();
let handlers = 0;

/** Counts an HTTP handler: with one in the process, no request can meet two, and nothing is kept. */
export function countHandler(): void {
  handlers++;
}

/** Whether what each limiter sends must be kept for the ones after it. */
export function stacking(): boolean {
  return handlers > 1;
}

const SINGLE = ['RateLimit-Policy', 'RateLimit', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
const LEGACY = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

/** Whether the earlier limiters' binding policy binds over `decision`'s. */
function binds(earlier: Sent, decision: Decision): boolean {
  if (earlier.allowed !== decision.allowed) return !earlier.allowed;
  if (!decision.allowed) return earlier.retryAfterMs > decision.retryAfterMs;
  return earlier.remaining < decision.remaining;
}

function copy(
  names: readonly string[],
  from: Readonly<Record<string, string>>,
  into: Record<string, string>,
) {
  for (const name of names) {
    const value = from[name];
    if (value !== undefined) into[name] = value;
  }
}

/** Merges into `headers` (this limiter's fields for `decision`) what earlier limiters sent on `req`. */
export function stack(
  req: object,
  mode: HeaderMode,
  legacy: boolean,
  decision: Decision,
  headers: Record<string, string>,
): void {
  const earlier = sent.get(req);
  const earlierBinds = earlier !== undefined && binds(earlier, decision);
  if (earlier !== undefined) {
    if (mode === 'draft-10' && earlier.mode === 'draft-10') {
      headers['RateLimit-Policy'] = `${earlier.headers['RateLimit-Policy']}, ${headers['RateLimit-Policy']}`;
      headers.RateLimit = `${earlier.headers.RateLimit}, ${headers.RateLimit}`;
    } else if (mode !== false && mode === earlier.mode && earlierBinds)
      copy(SINGLE, earlier.headers, headers);
    if (legacy && earlier.legacy && earlierBinds) copy(LEGACY, earlier.headers, headers);
  }
  const binding = earlierBinds ? earlier! : decision;
  sent.set(req, {
    mode,
    legacy,
    headers: { ...headers },
    allowed: binding.allowed,
    remaining: binding.remaining,
    retryAfterMs: binding.retryAfterMs,
  });
}

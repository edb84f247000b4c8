/** The types of @sluice/fetch's options and of what `rateLimiter()` returns. */
import type { Decision, HttpOptions, Limiter } from '@sluice/core';

/** A handler of the Fetch API's shape: Workers, Deno.serve, Bun.serve, Next.js, Vercel Edge. */
export type FetchHandler<C extends unknown[] = unknown[]> = (
  request: Request,
  ...context: C
) => Response | Promise<Response>;

/** Who is limited: a built-in source, or a function of the request and what the platform passed after it. */
export type FetchSubject<C extends unknown[]> =
  | 'ip'
  | 'api-key'
  | 'token'
  | ((request: Request, ...context: C) => string | undefined | Promise<string | undefined>);

type Replaced = 'subject' | 'cost' | 'skip' | 'plan' | 'handler';

/**
 * The HTTP options of the contract with the request a `Request`: `getIp`, `subject`, `cost`, `skip`
 * and `plan` also get the platform's context (Workers' `env, ctx`, Deno's `info`, Bun's `server`).
 */
export interface RateLimiterOptions<C extends unknown[] = unknown[]>
  extends Omit<HttpOptions<Request>, Replaced> {
  /** The client address; required when the subject can be `'ip'` (a bare Request carries none). */
  getIp?: (request: Request, ...context: C) => string | undefined;
  subject?: FetchSubject<C> | readonly FetchSubject<C>[];
  cost?: number | ((request: Request, ...context: C) => number | Promise<number>);
  skip?: (request: Request, ...context: C) => boolean | Promise<boolean>;
  plan?: (request: Request, ...context: C) => string | Promise<string>;
  /** Answers every refusal (429, 403, 503: `decision.reason` says which) instead of the problem+json body. */
  handler?: (request: Request, decision: Decision) => Response | Promise<Response>;
}

export interface Checked {
  /** The refusal, headers set; absent when the request may go on. */
  readonly response?: Response;
  /** The RateLimit fields to put on your own response. */
  readonly headers: Headers;
  readonly decision?: Decision;
  /** When defined, call once with your response's status when it is done (0: the client left). */
  readonly finish?: (status: number) => void;
}

export interface FetchRateLimiter<C extends unknown[] = unknown[]> {
  readonly limiter: Limiter;
  wrap(handler: FetchHandler<C>): FetchHandler<C>;
  check(request: Request, ...context: C): Promise<Checked>;
  /** The decision of the last limiter that decided this request, until it is done. */
  decisionOf(request: Request): Decision | undefined;
  /** Forgets the subject this request maps to, under every policy, and lifts its ban. */
  reset(request: Request, ...context: C): Promise<void>;
  /** The subject this request maps to as the limiter sees it (`ip:…`, `id:…`, credentials hashed). */
  subjectOf(request: Request, ...context: C): Promise<string>;
}

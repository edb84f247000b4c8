/**
 * What every adapter does around `handle`, whatever its runtime: the client address from a `getIp`
 * option, the user's `handler`, the limiter's API on the middleware, giving a charge back. Node's
 * request and response glue is in node/.
 */

import { ErrorCodes, SluiceConfigError } from '../errors.js';
import type { Limiter } from '../limiter.js';
import type { HttpHandler, HttpOutcome } from './handle.js';
import { isThenable } from './subject.js';
import type { RequestReader } from './types.js';

/**
 * `reader` with the client address read by an adapter's `getIp` option (Hono, Koa), when given; one
 * that is not a function is a configuration error.
 */
export function withGetIp<Req>(reader: RequestReader<Req>, getIp: unknown): RequestReader<Req> {
  if (getIp === undefined) return reader;
  if (typeof getIp !== 'function') {
    throw new SluiceConfigError(
      ErrorCodes.INVALID_OPTION,
      'getIp',
      `expected a function; got ${typeof getIp}`,
    );
  }
  return { ...reader, ip: getIp as RequestReader<Req>['ip'], trust: () => 'address' };
}

/** Gives back what a passing decision charged (a refund covers every policy, the lease included). */
export function giveBack({ decision }: Pick<HttpOutcome, 'decision'>): void {
  if (decision?.allowed) (decision.refund ?? decision.release)?.().catch(ignore);
}

function ignore(): void {}

/**
 * Answers a blocked outcome with the user's `handler` (headers and status already set); what it
 * throws or rejects goes to `fail`, the framework's error handling. Once it has returned (or its
 * promise resolved), `settled` runs: the adapter answers for a handler that answered nothing.
 */
export function callHandler<Req, Res>(
  outcome: HttpOutcome<Req, Res>,
  req: Req,
  res: Res,
  fail: (error: Error) => void,
  settled: () => void,
): void {
  try {
    afterHandler(outcome.handler!(req, res, outcome.decision!), settled)?.catch(fail);
  } catch (error) {
    fail(error as Error);
  }
}

/**
 * Runs `answer` once a `handler` returned (or resolved) a value: a body, the shape of
 * errorResponseBuilder, which answers nothing itself. A handler that returns nothing is left to answer
 * as it does, from a callback too (Express's res.render reads its view first): answering for it would
 * make its own answer throw, outside any try, and end the process.
 */
export function afterHandler(returned: unknown, answer: () => void): Promise<void> | undefined {
  if (isThenable(returned)) {
    return Promise.resolve(returned).then((value) => {
      if (value !== undefined) answer();
    });
  }
  if (returned !== undefined) answer();
  return undefined;
}

/** What every adapter's middleware (or hook) carries besides itself: its limiter, `reset` and `subjectOf`. */
export interface HandlerApi<Req> {
  readonly limiter: Limiter;
  /**
   * Forgets the subject this request maps to, under every policy, and lifts its ban: e.g. after a
   * successful login. (`limiter.reset(ip)` would reset nothing: subjects carry their kind.)
   */
  reset(req: Req): Promise<void>;
  /** The subject this request maps to as the limiter sees it (`ip:…`, `id:…`, credentials hashed). */
  subjectOf(req: Req): Promise<string>;
}

/** `fn` with `http`'s limiter, `reset` and `subjectOf` on it. */
export function withHandlerApi<F extends object, Req, Res>(
  fn: F,
  http: HttpHandler<Req, Res>,
): F & HandlerApi<Req> {
  return Object.assign(fn, {
    limiter: http.limiter,
    reset: (req: Req) => http.reset(req),
    subjectOf: async (req: Req) => http.subjectOf(req),
  });
}

/**
 * What every adapter does around `handle`, over Node's own request and response objects: Express
 * gives them as `req`/`res`, Fastify as `request.raw`/`reply.raw`. An adapter keeps only what its
 * framework does differently: putting the decision on the request, setting headers, sending a body.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Decision } from '../decision.js';
import type { HttpOutcome } from './handle.js';
import type { RequestReader } from './types.js';

/** A request as Express and Fastify present it: the client IP they resolved, headers, parsed query. */
export interface FrameworkRequest {
  readonly ip?: string;
  readonly headers: IncomingHttpHeaders;
  readonly query?: unknown;
  readonly socket?: { readonly remoteAddress?: string };
  /** The decision an earlier limiter put on the request. */
  readonly rateLimit?: Decision;
  /** Express's app, whose settings say which proxies it trusts. */
  readonly app?: { get(setting: string): unknown };
}

function first(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/**
 * Reads `req.ip` (so the framework's trust-proxy setting decides whether X-Forwarded-For counts),
 * `req.headers` and `req.query`; the first value of a repeated header or parameter.
 */
export const frameworkReader: RequestReader<FrameworkRequest> = {
  ip: (req) => req.ip,
  header: (req, name) => first(req.headers[name]),
  query: (req, name) => first((req.query as Record<string, unknown> | undefined)?.[name]),
  peer: (req) => req.socket?.remoteAddress,
  previous: (req) => req.rateLimit,
  trustsAnyProxy: (req) => typeof req.app?.get === 'function' && req.app.get('trust proxy') === true,
};

/**
 * Continues a passing outcome: `finish` is called once the handler has ended the response, the
 * request is held for `delayMs` (leaky bucket with delay), then `next()` runs, unless the client left
 * while held: then the handler never runs and the charge is given back.
 */
export function passOn(
  outcome: Pick<HttpOutcome, 'finish' | 'delayMs' | 'decision'>,
  res: ServerResponse,
  next: () => void,
): void {
  if (outcome.finish !== undefined) afterResponse(res, outcome.finish);
  if (outcome.delayMs > 0) hold(res, outcome, next);
  else next();
}

/**
 * True when the response is already over as a decision comes back (another middleware answered while
 * the store was slow, or the client left): the decision then gives back what it charged, its lease
 * included, and the adapter does nothing else with it (no header, no answer, no `next`).
 */
export function abandonIfLate(outcome: Pick<HttpOutcome, 'decision'>, res: ServerResponse): boolean {
  if (!res.headersSent && !res.writableEnded && !res.destroyed) return false;
  giveBack(outcome);
  return true;
}

/** Gives back what a passing decision charged (a refund covers every policy, the lease included). */
function giveBack({ decision }: Pick<HttpOutcome, 'decision'>): void {
  if (decision?.allowed) (decision.refund ?? decision.release)?.().catch(ignore);
}

function ignore(): void {}

/**
 * Answers a blocked outcome with the user's `handler` (headers and status already set); what it
 * throws or rejects goes to `fail`, the framework's error handling.
 */
export function callHandler<Req, Res>(
  outcome: HttpOutcome<Req, Res>,
  req: Req,
  res: Res,
  fail: (error: Error) => void,
): void {
  try {
    const answered: unknown = outcome.handler!(req, res, outcome.decision!);
    if (answered instanceof Promise) answered.catch(fail);
  } catch (error) {
    fail(error as Error);
  }
}

/**
 * Calls `finish` once the handler has ended the response: with its status when it finished, or 0 when
 * the client had left before the handler ended it (`res.end` on a dead socket emits no 'finish', so
 * `end` is watched then). A handler that never ends it leaves the lease to expire with its window.
 */
function afterResponse(res: ServerResponse, finish: (statusCode: number) => void): void {
  res.once('finish', () => finish(res.statusCode));
  res.once('close', () => {
    // Under fastify.inject 'close' may come before 'finish': an ended response is over either way.
    if (res.writableEnded) finish(res.statusCode);
    else whenEnded(res, () => finish(0));
  });
}

/** Runs `ended` when `res.end` is next called (on this response only). */
function whenEnded(res: ServerResponse, ended: () => void): void {
  const end = res.end;
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    res.end = end;
    const result = (end as (...a: unknown[]) => ServerResponse).apply(this, args);
    ended();
    return result;
  } as ServerResponse['end'];
}

/** Runs `next` after `delayMs`; a client gone meanwhile is not passed on, and its charge comes back. */
function hold(
  res: ServerResponse,
  outcome: Pick<HttpOutcome, 'delayMs' | 'decision'>,
  next: () => void,
): void {
  const gone = () => {
    clearTimeout(timer);
    giveBack(outcome);
  };
  const timer = setTimeout(() => {
    res.off('close', gone);
    next();
  }, outcome.delayMs);
  res.once('close', gone);
}

/**
 * What every adapter does around `handle`, over Node's own request and response objects: Express
 * gives them as `req`/`res`, Fastify as `request.raw`/`reply.raw`. An adapter keeps only what its
 * framework does differently: putting the decision on the request, setting headers, sending a body.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { HttpOutcome } from './handle.js';
import type { RequestReader } from './types.js';

/** A request as Express and Fastify present it: the client IP they resolved, headers, parsed query. */
export interface FrameworkRequest {
  readonly ip?: string;
  readonly headers: IncomingHttpHeaders;
  readonly query?: unknown;
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
};

/**
 * Continues a passing outcome: `finish` is called once the response is over, the request is held for
 * `delayMs` (leaky bucket with delay), then `next()` runs, unless the client left while held.
 */
export function passOn(
  outcome: Pick<HttpOutcome, 'finish' | 'delayMs'>,
  res: ServerResponse,
  next: () => void,
): void {
  if (outcome.finish !== undefined) afterResponse(res, outcome.finish);
  if (outcome.delayMs > 0) hold(res, outcome.delayMs, next);
  else next();
}

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
 * Calls `finish` with the status sent, or 0 when the connection closes first. Both events are
 * watched, as `writableFinished` is still false at 'close' under fastify.inject; `finish` ignores
 * the second call.
 */
function afterResponse(res: ServerResponse, finish: (statusCode: number) => void): void {
  res.once('finish', () => finish(res.statusCode));
  res.once('close', () => finish(0));
}

/** Runs `next` after `delayMs`; a client gone meanwhile is not passed on. */
function hold(res: ServerResponse, delayMs: number, next: () => void): void {
  const gone = () => clearTimeout(timer);
  const timer = setTimeout(() => {
    res.off('close', gone);
    next();
  }, delayMs);
  res.once('close', gone);
}

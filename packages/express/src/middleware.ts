import type { ServerResponse } from 'node:http';
import {
  createHttpHandler,
  type Decision,
  type HttpOptions,
  type HttpOutcome,
  type Limiter,
  PROBLEM_CONTENT_TYPE,
  type RequestReader,
} from '@sluice/core';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

declare global {
  namespace Express {
    interface Request {
      /** The rate-limit decision for this request (absent when skipped or allow-listed). */
      rateLimit?: Decision;
    }
  }
}

/** The options of `rateLimiter()`: the HTTP options of the contract, typed for Express. */
export type RateLimiterOptions = HttpOptions<Request, Response>;

/** Express middleware that also exposes its limiter (e.g. to `reset(subject)`). */
export type RateLimitMiddleware = RequestHandler & { readonly limiter: Limiter };

type Outcome = HttpOutcome<Request, Response>;

function first(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/** `'ip'` is `req.ip`, so Express's `trust proxy` setting decides whether X-Forwarded-For counts. */
const reader: RequestReader<Request> = {
  ip: (req) => req.ip,
  header: (req, name) => first(req.headers[name]),
  query: (req, name) => first((req.query as Record<string, unknown> | undefined)?.[name]),
};

/** Calls `finish` once the response is over: its status, or 0 when the connection closed first. */
function afterResponse(res: ServerResponse, finish: (statusCode: number) => void): void {
  // 'close' follows every response, finished or cut off: one listener tells both apart.
  res.once('close', () => finish(res.writableFinished ? res.statusCode : 0));
}

/** Holds a passing request for `delayMs`; a client gone meanwhile is not passed on. */
function hold(res: ServerResponse, delayMs: number, next: NextFunction): void {
  const gone = () => clearTimeout(timer);
  const timer = setTimeout(() => {
    res.off('close', gone);
    next();
  }, delayMs);
  res.once('close', gone);
}

function block(outcome: Outcome, req: Request, res: Response, next: NextFunction): void {
  res.statusCode = outcome.status;
  if (outcome.handler === undefined) {
    res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
    res.end(outcome.body);
    return;
  }
  try {
    const answered: unknown = outcome.handler(req, res, outcome.decision!);
    if (answered instanceof Promise) answered.catch(next);
  } catch (error) {
    next(error);
  }
}

function apply(outcome: Outcome, req: Request, res: Response, next: NextFunction): void {
  if (outcome.decision !== undefined) req.rateLimit = outcome.decision;
  const { headers } = outcome;
  for (const name in headers) res.setHeader(name, headers[name]!);
  if (!outcome.pass) {
    block(outcome, req, res, next);
    return;
  }
  if (outcome.finish !== undefined) afterResponse(res, outcome.finish);
  if (outcome.delayMs > 0) hold(res, outcome.delayMs, next);
  else next();
}

/**
 * Rate-limiting middleware for `app.use`, a router or a single route, on Express 4 and 5. Options
 * are checked here (a SluiceConfigError is thrown now, never on a request); errors from the
 * `subject`, `verify`, `cost`, `skip` and list callbacks go to `next(err)`.
 */
export function rateLimiter(options: RateLimiterOptions): RateLimitMiddleware {
  const http = createHttpHandler<Request, Response>(options, reader);
  const middleware: RequestHandler = (req, res, next) => {
    const outcome = http.handle(req);
    if (outcome instanceof Promise) outcome.then((o) => apply(o, req, res, next), next);
    else apply(outcome, req, res, next);
  };
  return Object.assign(middleware, { limiter: http.limiter });
}

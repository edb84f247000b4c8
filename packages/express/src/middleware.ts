import {
  callHandler,
  createHttpHandler,
  type Decision,
  frameworkReader,
  type HttpOptions,
  type HttpOutcome,
  type Limiter,
  PROBLEM_CONTENT_TYPE,
  passOn,
} from '@sluice/core';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { setDecision } from './request-decision.js';

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

function apply(outcome: Outcome, req: Request, res: Response, next: NextFunction): void {
  if (outcome.decision !== undefined) setDecision(req, outcome.decision);
  const { headers } = outcome;
  for (const name in headers) res.setHeader(name, headers[name]!);
  if (outcome.pass) {
    passOn(outcome, res, next);
    return;
  }
  res.statusCode = outcome.status;
  if (outcome.handler !== undefined) callHandler(outcome, req, res, next);
  else {
    res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
    res.end(outcome.body);
  }
}

/**
 * Rate-limiting middleware for `app.use`, a router or a single route, on Express 4 and 5. Options
 * are checked here (a SluiceConfigError is thrown now, never on a request); errors from the
 * `subject`, `verify`, `cost`, `skip` and list callbacks go to `next(err)`.
 */
export function rateLimiter(options: RateLimiterOptions): RateLimitMiddleware {
  // `'ip'` is `req.ip`, so Express's `trust proxy` setting decides whether X-Forwarded-For counts.
  const http = createHttpHandler<Request, Response>(options, frameworkReader);
  const middleware: RequestHandler = (req, res, next) => {
    const outcome = http.handle(req);
    if (outcome instanceof Promise) outcome.then((o) => apply(o, req, res, next), next);
    else apply(outcome, req, res, next);
  };
  return Object.assign(middleware, { limiter: http.limiter });
}

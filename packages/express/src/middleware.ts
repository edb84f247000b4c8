import {
  abandonIfLate,
  answerForHandler,
  callHandler,
  createHttpHandler,
  type Decision,
  frameworkReader,
  type HandlerApi,
  type HttpHandler,
  type HttpOptions,
  type HttpOutcome,
  PROBLEM_CONTENT_TYPE,
  passOn,
  setDecision,
  withHandlerApi,
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

/** Express middleware that also exposes its limiter, `reset(req)` and `subjectOf(req)`. */
export type RateLimitMiddleware = RequestHandler & HandlerApi<Request>;

type Outcome = HttpOutcome<Request, Response>;

function apply(
  http: HttpHandler<Request, Response>,
  outcome: Outcome,
  req: Request,
  res: Response,
  next: NextFunction,
): void {
  // Answered meanwhile (a timeout middleware while the store was slow), or the client left.
  if (abandonIfLate(outcome, res)) return;
  if (outcome.decision !== undefined) setDecision(req, outcome.decision);
  const { headers } = outcome;
  for (const name in headers) res.setHeader(name, headers[name]!);
  if (outcome.pass) {
    passOn(outcome, res, next);
    return;
  }
  res.statusCode = outcome.status;
  if (outcome.handler !== undefined)
    callHandler(outcome, req, res, next, () => answerForHandler(outcome, res, http));
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
    if (!(outcome instanceof Promise)) return apply(http, outcome, req, res, next);
    outcome.then((o) => {
      try {
        apply(http, o, req, res, next);
      } catch (error) {
        next(error);
      }
    }, next);
  };
  return withHandlerApi(middleware, http);
}

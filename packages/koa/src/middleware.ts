import {
  createHttpHandler,
  type Decision,
  frameworkReader,
  type HttpOptions,
  type HttpOutcome,
  type Limiter,
  PROBLEM_CONTENT_TYPE,
  passOn,
} from '@sluice/core';
import type { Context, Middleware, Next, Response } from 'koa';

declare module 'koa' {
  interface DefaultState {
    /** The rate-limit decision for this request (absent when skipped or allow-listed). */
    rateLimit?: Decision;
  }
}

/**
 * The options of `rateLimiter()`: the HTTP options of the contract, typed for Koa. Callbacks get the
 * context; `handler` gets the context and its response (`res.body = …`; the status is already set).
 */
export type RateLimiterOptions = HttpOptions<Context, Response>;

/** Koa middleware that also exposes its limiter, `reset(ctx)` and `subjectOf(ctx)`. */
export type RateLimitMiddleware = Middleware & {
  readonly limiter: Limiter;
  /** Forgets the subject this request maps to (every policy and the ban), e.g. after a good login. */
  reset(ctx: Context): Promise<void>;
  /** The subject this request maps to, as the limiter sees it (credentials hashed). */
  subjectOf(ctx: Context): Promise<string>;
};

type Outcome = HttpOutcome<Context, Response>;

async function apply(outcome: Outcome, ctx: Context, next: Next): Promise<void> {
  if (outcome.decision !== undefined) ctx.state.rateLimit = outcome.decision;
  ctx.set(outcome.headers);
  if (outcome.pass) {
    // Held (leaky bucket) and continued as on every framework; a client gone while held ends here.
    await new Promise<void>((resolve) => passOn(outcome, ctx.res, resolve));
    return next();
  }
  ctx.status = outcome.status;
  if (outcome.handler !== undefined) return outcome.handler(ctx, ctx.response, outcome.decision!);
  ctx.type = PROBLEM_CONTENT_TYPE;
  ctx.body = outcome.body;
}

/**
 * Rate-limiting middleware for Koa 2 and 3: `app.use(rateLimiter(options))`, or on a router's route.
 * Options are checked here (a SluiceConfigError is thrown now, never on a request). `'ip'` is
 * `ctx.ip`, so Koa's `app.proxy` setting decides whether X-Forwarded-For counts.
 */
export function rateLimiter(options: RateLimiterOptions): RateLimitMiddleware {
  const http = createHttpHandler<Context, Response>(options, frameworkReader);
  const middleware: Middleware = async (ctx, next) => {
    const outcome = http.handle(ctx);
    return apply(outcome instanceof Promise ? await outcome : outcome, ctx, next);
  };
  return Object.assign(middleware, {
    limiter: http.limiter,
    reset: async (ctx: Context) => http.limiter.reset(await http.subjectOf(ctx)),
    subjectOf: async (ctx: Context) => http.subjectOf(ctx),
  });
}

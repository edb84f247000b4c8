import {
  abandonIfLate,
  createHttpHandler,
  type Decision,
  forwardedByPrivateProxies,
  frameworkReader,
  type HandlerApi,
  type HttpHandler,
  type HttpOptions,
  type HttpOutcome,
  PROBLEM_CONTENT_TYPE,
  passOnAwaiting,
  type RequestReader,
  WarningCodes,
  withGetIp,
  withHandlerApi,
} from '@sluice/core';
import type { Context, Middleware, Next } from 'koa';

declare module 'koa' {
  interface DefaultState {
    /** The rate-limit decision for this request (absent when skipped or allow-listed). */
    rateLimit?: Decision;
  }
}

/**
 * The options of `rateLimiter()`: the HTTP options of the contract, typed for Koa. Koa has one object
 * for the request and the response, so `subject`, `skip`, `cost` and the lists get `ctx`, and
 * `handler` gets it twice: `handler(ctx, ctx, decision)` (status and headers already set; set
 * `ctx.body`, or throw to reach Koa's error handling).
 */
export interface RateLimiterOptions extends HttpOptions<Context, Context> {
  /**
   * The client address for the `'ip'` subject and address entries of the lists. Default: `ctx.ip`, so
   * Koa's `app.proxy` decides. Koa trusts proxies by count only, which a client that connects
   * directly defeats; `getIp: privateProxyIp` trusts X-Forwarded-For only from private-network peers.
   */
  getIp?: (ctx: Context) => string | undefined;
}

/** Koa middleware that also exposes its limiter, `reset(ctx)` and `subjectOf(ctx)`. */
export type RateLimitMiddleware = Middleware & HandlerApi<Context>;

type Outcome = HttpOutcome<Context, Context>;
type Http = HttpHandler<Context, Context>;

/**
 * `ctx.ip`, so Koa's `app.proxy` (with `maxIpsCount` and `proxyIpHeader`) decides whether
 * X-Forwarded-For counts; `ctx.headers`, `ctx.query` and `ctx.socket` as Express's are read.
 * `app.proxy` without `maxIpsCount` takes the first X-Forwarded-For entry, which the client writes.
 */
const koaReader: RequestReader<Context> = {
  // A Koa context reads as an Express request does, but for `app.get` (Koa's app has none).
  ...(frameworkReader as unknown as RequestReader<Context>),
  previous: (ctx) => ctx.state.rateLimit,
  trustsAnyProxy: (ctx) => ctx.app.proxy && !(ctx.app.maxIpsCount > 0),
  trust: (ctx) => (ctx.app.proxy ? 'count' : 'none'),
};

/**
 * A `getIp` for an app behind proxies on a private network, with `app.proxy` left off: the socket's
 * peer, or, while that hop is loopback, link-local or unique-local, the X-Forwarded-For entry it
 * appended (Express's 'loopback, linklocal, uniquelocal'). A client connecting directly cannot pick
 * its own address, as it can with `app.proxy` and `maxIpsCount`.
 */
export function privateProxyIp(ctx: Context): string | undefined {
  return forwardedByPrivateProxies(ctx.req.socket?.remoteAddress, ctx.get('x-forwarded-for') || undefined);
}

/** The problem+json refusal, Sluice's own answer. */
function refuse(outcome: Outcome, ctx: Context): void {
  ctx.type = PROBLEM_CONTENT_TYPE;
  ctx.body = outcome.body;
}

/**
 * After the user's `handler` returned (or resolved): one that set no body (returned one, as
 * errorResponseBuilder did) gets Sluice's own refusal, and a warning once per limiter.
 */
function answered(http: Http, outcome: Outcome, ctx: Context): void {
  if (ctx.body !== undefined || ctx.respond === false || ctx.res.headersSent) return;
  http.warn(WarningCodes.HANDLER_NO_ANSWER);
  refuse(outcome, ctx);
}

function apply(http: Http, outcome: Outcome, ctx: Context, next: Next): Promise<void> | void {
  // Answered meanwhile (a timeout middleware while the store was slow), or the client left.
  if (abandonIfLate(outcome, ctx.res)) return;
  if (outcome.decision !== undefined) ctx.state.rateLimit = outcome.decision;
  const { headers } = outcome;
  // Straight on Node's response: ctx.set would only check and convert each value again.
  for (const name in headers) ctx.res.setHeader(name, headers[name]!);
  if (outcome.pass) return passOnAwaiting(outcome, ctx.res, next);
  ctx.status = outcome.status;
  if (outcome.handler === undefined) return refuse(outcome, ctx);
  const returned: unknown = outcome.handler(ctx, ctx, outcome.decision!);
  if (!(returned instanceof Promise)) return answered(http, outcome, ctx);
  return returned.then(() => answered(http, outcome, ctx));
}

/**
 * Rate-limiting middleware for `app.use` or a router's route, on Koa 2 and 3. Options are checked here
 * (a SluiceConfigError is thrown now, never on a request); errors from the `subject`, `verify`, `cost`,
 * `skip` and list callbacks, and from `handler`, are thrown to Koa's error handling.
 */
export function rateLimiter(options: RateLimiterOptions): RateLimitMiddleware {
  const { getIp, ...rest } = options;
  const http = createHttpHandler<Context, Context>(rest, withGetIp(koaReader, getIp), ['getIp']);
  const middleware: Middleware = (ctx, next) => {
    const outcome = http.handle(ctx);
    if (!(outcome instanceof Promise)) return apply(http, outcome, ctx, next);
    return outcome.then((o) => apply(http, o, ctx, next));
  };
  return withHandlerApi(middleware, http);
}

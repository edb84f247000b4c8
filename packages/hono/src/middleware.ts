import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createHttpHandler,
  type Decision,
  type HttpOptions,
  type HttpOutcome,
  type Limiter,
  PROBLEM_CONTENT_TYPE,
  passOn,
  type RequestReader,
} from '@sluice/core';
import type { Context, MiddlewareHandler } from 'hono';

/** `c.get('rateLimit')`: declare it on your app with `new Hono<{ Variables: RateLimitVariables }>()`. */
export interface RateLimitVariables {
  /** The rate-limit decision for this request (absent when skipped or allow-listed). */
  rateLimit?: Decision;
}

/** What @hono/node-server puts in `c.env`: Node's own request and response. */
interface NodeBindings {
  incoming?: IncomingMessage;
  outgoing?: ServerResponse;
}

type HttpOptionsForHono = HttpOptions<Context, Context>;

/**
 * The options of `rateLimiter()`: the HTTP options of the contract, typed for Hono (callbacks get the
 * context), plus `getIp`. `handler` returns the Response to send.
 */
export interface RateLimiterOptions extends Omit<HttpOptionsForHono, 'handler'> {
  /** The client address for the `'ip'` subject; default: the connection's address (@hono/node-server). */
  getIp?: (c: Context) => string | undefined;
  /**
   * Answers every refusal instead of the problem+json body (`decision.reason` says why); the status
   * (`c.status`) and the RateLimit fields are already set on `c`, so `c.json(…)` sends them.
   */
  handler?: (c: Context, decision: Decision) => Response | Promise<Response>;
}

/** Hono middleware that also exposes its limiter, `reset(c)` and `subjectOf(c)`. */
export type RateLimitMiddleware = MiddlewareHandler & {
  readonly limiter: Limiter;
  /** Forgets the subject this request maps to (every policy and the ban), e.g. after a good login. */
  reset(c: Context): Promise<void>;
  /** The subject this request maps to, as the limiter sees it (credentials hashed). */
  subjectOf(c: Context): Promise<string>;
};

function connectionAddress(c: Context): string | undefined {
  return (c.env as NodeBindings | undefined)?.incoming?.socket.remoteAddress;
}

function readerOf(getIp: (c: Context) => string | undefined): RequestReader<Context> {
  return { ip: getIp, header: (c, name) => c.req.header(name), query: (c, name) => c.req.query(name) };
}

type Outcome = HttpOutcome<Context, Context>;

async function apply(outcome: Outcome, c: Context, next: () => Promise<void>): Promise<Response | undefined> {
  if (outcome.decision !== undefined) c.set('rateLimit', outcome.decision);
  const { headers } = outcome;
  for (const name in headers) c.header(name, headers[name]);
  if (outcome.pass) {
    const outgoing = (c.env as NodeBindings | undefined)?.outgoing;
    if (outgoing !== undefined) await new Promise<void>((resolve) => passOn(outcome, outgoing, resolve));
    await next();
    // Outside Node's server there is no response object to watch: the handler's answer is the end.
    if (outgoing === undefined) outcome.finish?.(c.res.status);
    return undefined;
  }
  c.status(outcome.status as 429);
  const handler = outcome.handler as RateLimiterOptions['handler'];
  if (handler !== undefined) return handler(c, outcome.decision!);
  c.header('Content-Type', PROBLEM_CONTENT_TYPE);
  return c.body(outcome.body!);
}

/**
 * Rate-limiting middleware for Hono 4 on @hono/node-server: `app.use(rateLimiter(options))`, or on a
 * route. Options are checked here (a SluiceConfigError is thrown now, never on a request).
 */
export function rateLimiter(options: RateLimiterOptions): RateLimitMiddleware {
  const { getIp = connectionAddress, ...rest } = options;
  const http = createHttpHandler<Context, Context>(rest as HttpOptionsForHono, readerOf(getIp));
  const middleware: MiddlewareHandler = async (c, next) => {
    const outcome = http.handle(c);
    return apply(outcome instanceof Promise ? await outcome : outcome, c, next);
  };
  return Object.assign(middleware, {
    limiter: http.limiter,
    reset: async (c: Context) => http.limiter.reset(await http.subjectOf(c)),
    subjectOf: async (c: Context) => http.subjectOf(c),
  });
}

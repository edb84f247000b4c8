import type { IncomingMessage, ServerResponse } from 'node:http';
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
  socketGone,
  WarningCodes,
  withGetIp,
  withHandlerApi,
} from '@sluice/core';
import type { Context, MiddlewareHandler, Next } from 'hono';
import type { StatusCode } from 'hono/utils/http-status';

declare module 'hono' {
  interface ContextVariableMap {
    /** The rate-limit decision for this request (undefined when skipped or allow-listed). */
    rateLimit: Decision | undefined;
  }
}

/**
 * The options of `rateLimiter()`: the HTTP options of the contract, typed for Hono, and `getIp`.
 * Hono has one object for the request and the response, so `subject`, `skip`, `cost` and the lists
 * get `c`, and `handler` gets it twice: `handler(c, c, decision)` returns the Response (status and
 * headers already set: `return c.json(...)`).
 */
export interface RateLimiterOptions extends HttpOptions<Context, Context> {
  /**
   * The client address for the `'ip'` subject and address entries of the lists. Default: the address
   * of the connection under @hono/node-server (what its `getConnInfo(c)` reads). Behind a proxy, or
   * on another runtime, read it here (Hono has no portable one), e.g. the last X-Forwarded-For entry
   * your own proxy appended.
   */
  getIp?: (c: Context) => string | undefined;
}

/** Hono middleware that also exposes its limiter, `reset(c)` and `subjectOf(c)`. */
export type RateLimitMiddleware = MiddlewareHandler & HandlerApi<Context>;

type Outcome = HttpOutcome<Context, Context>;
type Http = HttpHandler<Context, Context>;

/** What @hono/node-server puts in `c.env` (HttpBindings; `server` when it is wrapped), as its getConnInfo reads it. */
interface NodeBindings {
  readonly incoming?: IncomingMessage;
  readonly outgoing?: ServerResponse;
  readonly server?: NodeBindings;
}

function nodeOf(c: Context): NodeBindings | undefined {
  const env = c.env as NodeBindings | undefined;
  return env?.server ?? env;
}

/** The connection's address under @hono/node-server; undefined elsewhere. */
function connectionIp(c: Context): string | undefined {
  return nodeOf(c)?.incoming?.socket?.remoteAddress;
}

/**
 * A `getIp` for an app behind proxies on a private network under @hono/node-server: the connection's
 * address, or, while that hop is loopback, link-local or unique-local, the X-Forwarded-For entry it
 * appended (Express's 'loopback, linklocal, uniquelocal'). A client connecting directly cannot pick
 * its own address; elsewhere (no connection to read) undefined.
 */
export function privateProxyIp(c: Context): string | undefined {
  const incoming = nodeOf(c)?.incoming;
  if (incoming === undefined) return undefined;
  return forwardedByPrivateProxies(
    incoming.socket?.remoteAddress,
    frameworkReader.header(incoming, 'x-forwarded-for'),
  );
}

/**
 * Reads Node's own request under @hono/node-server: `c.req.header()` would make it build a whole
 * Fetch Request (and copy every header) for one value. Elsewhere, Hono's request.
 */
const honoReader: RequestReader<Context> = {
  ip: connectionIp,
  header: (c, name) => {
    const incoming = nodeOf(c)?.incoming;
    return incoming === undefined ? c.req.header(name) : frameworkReader.header(incoming, name);
  },
  query: (c, name) => c.req.query(name),
  peer: connectionIp,
  gone: (c) => {
    const socket = nodeOf(c)?.incoming?.socket;
    return socket !== undefined && socketGone(socket);
  },
  previous: (c) => c.get('rateLimit'),
};

/**
 * The answer when the client left (while held, or before a slow store answered): nobody reads it,
 * but Hono takes a middleware that neither continues nor returns a Response for a bug (a logged 500).
 */
function toNobody(c: Context): Response {
  return c.body(null, 499 as StatusCode);
}

/** The problem+json refusal, Sluice's own answer. */
function refuse(outcome: Outcome, c: Context): Response {
  c.header('Content-Type', PROBLEM_CONTENT_TYPE);
  return c.body(outcome.body!);
}

/**
 * What the user's `handler` returned (or resolved): a Response, or, when it returned none (a body,
 * as errorResponseBuilder did), Sluice's own refusal, with a warning once per limiter.
 */
function answered(http: Http, outcome: Outcome, c: Context, returned: unknown) {
  if (returned instanceof Response || c.finalized) return returned;
  http.warn(WarningCodes.HANDLER_NO_ANSWER);
  return refuse(outcome, c);
}

function apply(http: Http, outcome: Outcome, c: Context, next: Next): Promise<unknown> | Response {
  const res = nodeOf(c)?.outgoing;
  // Answered meanwhile (a timeout middleware while the store was slow), or the client left.
  if (abandonIfLate(outcome, res)) return toNobody(c);
  if (outcome.decision !== undefined) c.set('rateLimit', outcome.decision);
  const { headers } = outcome;
  // Under @hono/node-server, on Node's response: its writeHead merges them into whatever Response the
  // handler returns, one it built itself included (headers prepared on `c` reach only those made
  // with `c`), and no Headers object is made. Elsewhere, prepared on `c`.
  if (res === undefined) for (const name in headers) c.header(name, headers[name]);
  else for (const name in headers) res.setHeader(name, headers[name]!);
  if (outcome.pass) {
    const passed = passOnAwaiting(outcome, res, next, res === undefined ? () => c.res.status : undefined);
    // Held: a client gone meanwhile was not passed on.
    return outcome.delayMs > 0 ? passed.then(() => (c.finalized ? undefined : toNobody(c))) : passed;
  }
  c.status(outcome.status as StatusCode);
  if (outcome.handler === undefined) return refuse(outcome, c);
  const returned: unknown = outcome.handler(c, c, outcome.decision!);
  if (!(returned instanceof Promise)) return answered(http, outcome, c, returned) as Response;
  return returned.then((r) => answered(http, outcome, c, r));
}

/**
 * Rate-limiting middleware for `app.use` or a single route, on Hono 4 (served by @hono/node-server,
 * or elsewhere with `getIp`). Options are checked here (a SluiceConfigError is thrown now, never on a
 * request); errors from the `subject`, `verify`, `cost`, `skip` and list callbacks, and from `handler`,
 * are thrown to Hono's error handling (`app.onError`).
 */
export function rateLimiter(options: RateLimiterOptions): RateLimitMiddleware {
  const { getIp, ...rest } = options;
  const http = createHttpHandler<Context, Context>(rest, withGetIp(honoReader, getIp), ['getIp']);
  // A decision made in process answers with no promise of its own: Hono awaits what it is given.
  const middleware = (c: Context, next: Next) => {
    const outcome = http.handle(c);
    if (!(outcome instanceof Promise)) return apply(http, outcome, c, next);
    return outcome.then((o) => apply(http, o, c, next));
  };
  return withHandlerApi(middleware as MiddlewareHandler, http);
}

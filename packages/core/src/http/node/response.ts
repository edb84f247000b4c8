/**
 * What the Node adapters do around `handle`, over Node's own request and response objects: Express
 * gives them as `req`/`res`, Fastify as `request.raw`/`reply.raw`, Koa as `ctx.res`, Hono on
 * @hono/node-server as `c.env.outgoing`. An adapter keeps only what its framework does differently:
 * putting the decision on the request, setting headers, sending a body. Types only from node:http: a
 * Hono app off Node passes no response and these run their Web-standard branch.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Decision } from '../../decision.js';
import { giveBack } from '../adapter.js';
import { type HttpHandler, type HttpOutcome, isGone, PROBLEM_CONTENT_TYPE } from '../handle.js';
import { checkTrustProxy, trustOf } from '../trust-proxy.js';
import type { RequestReader } from '../types.js';
import { WarningCodes } from '../validate.js';

/** A request as Express and Fastify present it: the client IP they resolved, headers, parsed query. */
export interface FrameworkRequest {
  readonly ip?: string;
  readonly headers: IncomingHttpHeaders;
  readonly query?: unknown;
  readonly socket?: {
    readonly remoteAddress?: string;
    readonly destroyed?: boolean;
    readonly localPort?: number;
  };
  /** The decision an earlier limiter put on the request. */
  readonly rateLimit?: Decision;
  /** Express's app, whose settings say which proxies it trusts. */
  readonly app?: { get(setting: string): unknown };
  /** Fastify's instance (its options say which proxies it trusts). */
  readonly server?: unknown;
}

/**
 * A client that reset its connection: Node has destroyed the socket, or is about to (a TCP socket that
 * no longer has a peer address; a Unix socket, with no local port, never has one).
 */
export function socketGone(socket: NonNullable<FrameworkRequest['socket']>): boolean {
  return (
    socket.destroyed === true || (socket.remoteAddress === undefined && typeof socket.localPort === 'number')
  );
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
  gone: (req) => req.socket !== undefined && socketGone(req.socket),
  previous: (req) => req.rateLimit,
  app: (req) => req.app ?? req.server,
  trust: (req) => trustOf(req.app ?? req.server),
  checkApp: checkTrustProxy,
};

/**
 * Continues a passing outcome: `finish` is called once the handler has ended the response, the
 * request is held for `delayMs` (leaky bucket with delay), then `next()` runs, unless the client left
 * while held: then the handler never runs, the charge is given back and `left` runs (a Nest guard
 * must still settle).
 */
export function passOn(
  outcome: Pick<HttpOutcome, 'finish' | 'delayMs' | 'decision'>,
  res: ServerResponse,
  next: () => void,
  left?: () => void,
): void {
  if (outcome.finish !== undefined) afterResponse(res, outcome.finish);
  if (outcome.delayMs > 0) hold(res, outcome, next, left);
  else next();
}

/**
 * True when the response is already over as a decision comes back (another middleware answered while
 * the store was slow, or the client left), or the client had gone before the decision (`gone`, nothing
 * charged): the decision then gives back what it charged, its lease included, and the adapter does
 * nothing else with it (no header, no answer, no `next`). Adapters ask on every path, in-process
 * decisions included: a client may reset before the limiter runs.
 */
export function abandonIfLate(
  outcome: Pick<HttpOutcome, 'decision' | 'pass' | 'status'>,
  /** Undefined off Node's http (Hono on another runtime): nothing tells, so never late. */
  res: ServerResponse | undefined,
): boolean {
  if (isGone(outcome)) return true;
  if (res === undefined) return false;
  if (!res.headersSent && !res.writableEnded && !clientLeft(res)) return false;
  giveBack(outcome);
  return true;
}

/**
 * Whether the client of this response has gone. A response queued behind others on its connection
 * (HTTP pipelining) has no socket yet: its request's tells.
 */
function clientLeft(res: ServerResponse): boolean {
  const socket = (res.req as ServerResponse['req'] | undefined)?.socket;
  return res.destroyed || (socket !== undefined && socket !== null && socketGone(socket));
}

/**
 * Sends Sluice's own refusal for a `handler` that returned (or resolved) without answering, over
 * Node's response, and warns once per limiter: a handler shaped like errorResponseBuilder (returning
 * a body) would otherwise leave the client waiting for ever. Nothing when the handler answered.
 */
export function answerForHandler(
  outcome: Pick<HttpOutcome, 'body'>,
  res: ServerResponse,
  http: Pick<HttpHandler<never>, 'warn'>,
): void {
  if (res.headersSent || res.writableEnded) return;
  http.warn(WarningCodes.HANDLER_NO_ANSWER);
  res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
  res.end(outcome.body);
}

/**
 * Calls `finish` once the handler has ended the response: with its status when it finished, or 0 when
 * the client had left before the handler ended it (`res.end` on a dead socket emits no 'finish', so
 * `end` is watched then). A handler that never ends it leaves the lease to expire with its window.
 */
function afterResponse(res: ServerResponse, finish: (statusCode: number) => void): void {
  res.once('finish', () => finish(res.statusCode));
  onClose(res, () => {
    // Under fastify.inject 'close' may come before 'finish': an ended response is over either way.
    if (res.writableEnded) finish(res.statusCode);
    else whenEnded(res, () => finish(0));
  });
}

/**
 * Runs `closed` once, when the response closes or its request does: a response queued behind others
 * on its connection (HTTP pipelining) never emits 'close' when the client resets; its request does.
 * Returns what stops listening.
 */
function onClose(res: ServerResponse, closed: () => void): () => void {
  const req = res.req as ServerResponse['req'] | undefined;
  const once = () => {
    off();
    closed();
  };
  const off = () => {
    res.off('close', once);
    req?.off('close', once);
  };
  res.once('close', once);
  req?.once('close', once);
  return off;
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

/**
 * `passOn` for middleware that awaits the rest of its chain (Koa, Hono): holds a passing outcome for
 * `delayMs`, then resolves with `next()`; a client gone while held is not passed on (its charge comes
 * back) and the promise resolves without it. `finish` gets the response's status when it finishes, or
 * 0 once both the client has left and the chain has settled: the chain settling is when the handler is
 * done, and Koa 2 never ends the response of a client that left, so waiting for `res.end` would keep a
 * lease out until its window ended. Without a Node response (`res` undefined: Hono on another runtime)
 * `finish` gets `status()` when the chain settles. No promise of its own when nothing is held.
 */
export function passOnAwaiting(
  outcome: Pick<HttpOutcome, 'finish' | 'delayMs' | 'decision'>,
  res: ServerResponse | undefined,
  next: () => Promise<void>,
  /** The status the framework holds once the chain settled; read only when `res` is undefined. */
  status?: () => number,
): Promise<void> {
  const { finish } = outcome;
  const run =
    finish === undefined
      ? next
      : res === undefined
        ? () => next().then(() => finish(status?.() ?? 0))
        : () => untilOver(res, finish, next);
  if (outcome.delayMs <= 0) return run();
  return new Promise<boolean>((resolve) => {
    if (res === undefined) setTimeout(resolve, outcome.delayMs, true);
    else
      hold(
        res,
        outcome,
        () => resolve(true),
        () => resolve(false),
      );
  }).then((stayed) => (stayed ? run() : undefined));
}

/** Runs `next()` and calls `finish` once the response is over (see `passOnAwaiting`). */
function untilOver(
  res: ServerResponse,
  finish: (statusCode: number) => void,
  next: () => Promise<void>,
): Promise<void> {
  let settled = false;
  res.once('finish', () => finish(res.statusCode));
  onClose(res, () => {
    if (res.writableEnded) finish(res.statusCode);
    else if (settled) finish(0);
    else whenEnded(res, () => finish(0));
  });
  const over = () => {
    settled = true;
    if (clientLeft(res) && !res.writableEnded) finish(0);
  };
  return next().then(over, (error: unknown) => {
    over();
    throw error;
  });
}

/**
 * Runs `next` after `delayMs`; a client gone meanwhile is not passed on, its charge comes back, and
 * `left` runs.
 */
function hold(
  res: ServerResponse,
  outcome: Pick<HttpOutcome, 'delayMs' | 'decision'>,
  next: () => void,
  left?: () => void,
): void {
  const timer = setTimeout(() => {
    off();
    next();
  }, outcome.delayMs);
  const off = onClose(res, () => {
    clearTimeout(timer);
    giveBack(outcome);
    left?.();
  });
}

import {
  createHttpHandler,
  type Decision,
  ErrorCodes,
  giveBack,
  type HttpOptions,
  type HttpOutcome,
  isGone,
  PROBLEM_CONTENT_TYPE,
  type RequestReader,
  SluiceConfigError,
  socketGone,
  WarningCodes,
  withGetIp,
} from '@sluice/core';
import { whenBodyDone, withHeaders } from './response.js';
import type { Checked, FetchHandler, FetchRateLimiter, RateLimiterOptions } from './types.js';

/** One request as the core HTTP layer reads it: the Request and the platform's context. */
interface Call {
  readonly request: Request;
  readonly context: unknown[];
  url?: URL;
}

type Fn = (...args: never[]) => unknown;
/** `fn(request, ...context)` for a function of the request and its context; anything else as given. */
const withContext = (fn: unknown) =>
  typeof fn === 'function'
    ? (call: Call) => (fn as Fn)(call.request as never, ...(call.context as never[]))
    : fn;
/** `fn(request, ...rest)`: list tests, `onDecision`. */
const byRequest = (fn: unknown) =>
  typeof fn === 'function'
    ? (call: Call, ...rest: never[]) => (fn as Fn)(call.request as never, ...rest)
    : fn;

const PLATFORM_SOURCES =
  "Cloudflare: request.headers.get('cf-connecting-ip'); Deno.serve: (request, info) => info.remoteAddr.hostname; Bun.serve: (request, server) => server.requestIP(request)?.address; Vercel: request.headers.get('x-real-ip')";

/** Whether `'ip'` may be the subject: the default, or named in the subject option. */
function mayBeIp(subject: unknown): boolean {
  return subject === undefined || subject === 'ip' || (Array.isArray(subject) && subject.includes('ip'));
}

/** The decision of the last limiter that decided a request: what a limiter after it adds to (stacked). */
const decisions = new WeakMap<Request, Decision>();
/** The last limiter's `check` on a request: an outer `wrap` leaves the fields an inner one set. */
const lastCheck = new WeakMap<Request, object>();

/**
 * Whether the client has gone. A Request's signal aborts when it goes (workerd, Deno, Bun). On Node,
 * @hono/node-server passes `{ incoming }` (Node's request) as the context, and its Request's signal
 * stays quiet for a request pipelined behind another when the client resets: the socket tells (told
 * apart by shape, nothing of Node imported).
 */
function left(call: Call): boolean {
  if (call.request.signal?.aborted === true) return true;
  const socket = (call.context[0] as { incoming?: { socket?: unknown } } | undefined)?.incoming?.socket;
  return (
    typeof socket === 'object' && socket !== null && socketGone(socket as Parameters<typeof socketGone>[0])
  );
}

const reader: RequestReader<Call> = {
  ip: () => undefined,
  header: (call, name) => call.request.headers.get(name) ?? undefined,
  query: (call, name) => {
    call.url ??= new URL(call.request.url);
    return call.url.searchParams.get(name) ?? undefined;
  },
  gone: left,
  previous: (call) => decisions.get(call.request),
};

/**
 * What `check` answers for a client that has gone: nobody reads it. (nginx's 499 is no status a
 * Response may carry: 200 to 599 only.)
 */
const CLIENT_GONE = 408;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A limiter for fetch handlers. Options are checked here (a SluiceConfigError is thrown now, never on a
 * request); errors from the option callbacks and `handler` reject `check` and the wrapped handler.
 */
export function rateLimiter<C extends unknown[] = unknown[]>(
  options: RateLimiterOptions<C>,
): FetchRateLimiter<C> {
  const { getIp, subject, cost, skip, plan, allowList, denyList, onDecision, handler, ...rest } = options;
  if (getIp === undefined && mayBeIp(subject)) {
    throw new SluiceConfigError(
      ErrorCodes.INVALID_OPTION,
      'getIp',
      `a Request carries no client address, and the subject can be 'ip'${subject === undefined ? ' (the default)' : ''}: give getIp, e.g. ${PLATFORM_SOURCES}; or a subject without 'ip'`,
    );
  }
  if (getIp !== undefined && typeof getIp !== 'function') {
    throw new SluiceConfigError(
      ErrorCodes.INVALID_OPTION,
      'getIp',
      `expected a function (request, ...context) => string | undefined, e.g. ${PLATFORM_SOURCES}`,
    );
  }
  const translated = {
    ...rest,
    subject: Array.isArray(subject) ? subject.map(withContext) : withContext(subject),
    ...{ cost: withContext(cost), skip: withContext(skip), plan: withContext(plan) },
    ...{ allowList: byRequest(allowList), denyList: byRequest(denyList), onDecision: byRequest(onDecision) },
    // Anything but a function is the core's to refuse (a SluiceConfigError now, not a 500 per request).
    handler:
      typeof handler === 'function'
        ? (call: Call, _: undefined, decision: Decision) => handler(call.request, decision)
        : handler,
  };
  for (const key of Object.keys(translated) as (keyof typeof translated)[])
    if (translated[key] === undefined) delete translated[key];
  const withIp =
    getIp === undefined ? undefined : (call: Call) => getIp(call.request, ...(call.context as C));
  const http = createHttpHandler<Call, undefined>(
    translated as HttpOptions<Call, undefined>,
    withGetIp(reader, withIp),
    ['getIp'],
  );

  async function refusal(
    outcome: HttpOutcome<Call, undefined>,
    call: Call,
    headers: Headers,
  ): Promise<Response> {
    if (outcome.handler !== undefined) {
      const answer: unknown = await outcome.handler(call, undefined, outcome.decision!);
      if (answer instanceof Response) return withHeaders(answer, headers);
      http.warn(WarningCodes.HANDLER_NO_ANSWER);
    }
    headers.set('Content-Type', PROBLEM_CONTENT_TYPE);
    return new Response(outcome.body, { status: outcome.status, headers });
  }

  async function check(request: Request, ...context: C): Promise<Checked> {
    const call: Call = { request, context };
    const outcome = await http.handle(call);
    const headers = new Headers(outcome.headers);
    const { decision } = outcome;
    if (decision !== undefined) decisions.set(request, decision);
    lastCheck.set(request, headers);
    // Gone before the decision (nothing charged), while the store decided or while held (the charge
    // comes back): no handler runs.
    if (isGone(outcome)) return { response: new Response(null, { status: CLIENT_GONE }), headers };
    if (!outcome.pass) return { response: await refusal(outcome, call, headers), headers, decision };
    if (outcome.delayMs > 0) await sleep(outcome.delayMs);
    if (left(call)) {
      giveBack(outcome);
      return { response: new Response(null, { status: CLIENT_GONE }), headers, decision };
    }
    const { finish } = outcome;
    if (finish === undefined) return { headers, decision };
    let finished = false;
    const once = (status: number) => {
      if (finished) return;
      finished = true;
      if (decisions.get(request) === decision) decisions.delete(request);
      // A client that left before the response was done gives nothing back (0), as on Node.
      finish(left(call) ? 0 : status);
    };
    return { headers, decision, finish: once };
  }

  function wrap(fetchHandler: FetchHandler<C>): FetchHandler<C> {
    return async (request, ...context) => {
      const { response, headers, finish } = await check(request, ...context);
      if (response !== undefined) return response;
      let answer: Response;
      try {
        answer = await fetchHandler(request, ...context);
      } catch (error) {
        finish?.(500);
        throw error;
      }
      // A limiter wrapped inside this one decided after it: its fields already include this one's.
      const headed = lastCheck.get(request) === headers ? withHeaders(answer, headers) : answer;
      return finish === undefined ? headed : whenBodyDone(headed, finish);
    };
  }

  return {
    limiter: http.limiter,
    wrap,
    check,
    decisionOf: (request) => decisions.get(request),
    reset: (request, ...context) => http.reset({ request, context }),
    subjectOf: async (request, ...context) => http.subjectOf({ request, context }),
  };
}

import type { ServerResponse } from 'node:http';
import {
  type CanActivate,
  type ExecutionContext,
  HttpException,
  Inject,
  Injectable,
  Optional,
} from '@nestjs/common';
import type { Decision, FrameworkRequest, GraphqlExchange, HttpHandler, HttpOutcome } from '@sluice/core';
import {
  abandonIfLate,
  afterHandler,
  graphqlExchange,
  graphqlRefusal,
  oncePerRequest,
  PROBLEM_CONTENT_TYPE,
  passOn,
  setDecision,
  WarningCodes,
} from '@sluice/core';
import { RouteLimits } from './limits.js';

interface PlatformResponse {
  readonly raw?: ServerResponse; // Fastify's reply has it; Express's `res` is Node's response itself
  status(code: number): { type?(type: string): { send(body: unknown): unknown } };
}

const rawOf = (res: PlatformResponse) => res.raw ?? (res as unknown as ServerResponse);

/**
 * Thrown once the guard answered a refusal itself, so that no handler runs (a catch-all filter should
 * leave it). Under GraphQL it is the answer: the GraphQL layer reports it as the field's error, with
 * `extensions` (the problem details and a `code` such as TOO_MANY_REQUESTS).
 */
export class RateLimitException extends HttpException {
  /** `decision.reason` says which refusal: 'limit', 'ban', 'deny-list', 'store-error'. */
  constructor(
    status: number,
    readonly decision?: Decision,
    readonly extensions?: ReturnType<typeof graphqlRefusal>,
  ) {
    super({ status, policy: decision?.policy, message: extensions?.detail }, status);
  }
}

type Outcome = HttpOutcome<FrameworkRequest>;
type Http = HttpHandler<FrameworkRequest, unknown>;

interface FastifyReplyLike extends PlatformResponse {
  readonly sent?: boolean; // Fastify's reply: whether it was sent
}

/** Sluice's own refusal, as the Express and Fastify adapters send it (Fastify's through its reply). */
function send(outcome: Outcome, res: PlatformResponse): void {
  if (res.raw !== undefined) res.status(outcome.status).type!(PROBLEM_CONTENT_TYPE).send(outcome.body);
  else rawOf(res).setHeader('Content-Type', PROBLEM_CONTENT_TYPE).end(outcome.body);
}

/** After the user's `handler` settled: one that sent nothing gets Sluice's refusal, and one warning. */
function answered(http: Http, outcome: Outcome, res: FastifyReplyLike): void {
  const raw = rawOf(res);
  if (res.sent === true || raw.headersSent || raw.writableEnded) return;
  http.warn(WarningCodes.HANDLER_NO_ANSWER);
  send(outcome, res);
}

/** Answers a refusal as the Express and Fastify adapters do, then stops Nest. */
function refuse(
  http: Http,
  outcome: Outcome,
  req: FrameworkRequest,
  res: PlatformResponse,
): never | Promise<never> {
  const stop = () => {
    throw new RateLimitException(outcome.status, outcome.decision);
  };
  res.status(outcome.status);
  if (outcome.handler === undefined) {
    send(outcome, res);
    return stop();
  }
  const settled = afterHandler(outcome.handler(req, res, outcome.decision!), () =>
    answered(http, outcome, res),
  );
  return settled === undefined ? stop() : settled.then(stop);
}

// Held (leaky bucket with delay) before it passes; a client gone meanwhile is not let through.
function held(outcome: Outcome, raw: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => passOn(outcome, raw, resolve.bind(null, true), resolve.bind(null, false)));
}

function decide(
  outcome: Outcome,
  req: FrameworkRequest,
  raw: ServerResponse,
  refuse: (outcome: Outcome) => never | Promise<never>,
): boolean | Promise<boolean> {
  // Answered meanwhile, or the client left: the charge is back, and nothing runs for nobody.
  if (abandonIfLate(outcome, raw)) return false;
  if (outcome.decision !== undefined) setDecision(req, outcome.decision);
  const { headers } = outcome;
  // On Node's response on either platform: Fastify's writeHead merges them with its own.
  for (const name in headers) raw.setHeader(name, headers[name]!);
  if (!outcome.pass) return refuse(outcome);
  if (outcome.delayMs > 0) return held(outcome, raw);
  passOn(outcome, raw, () => {});
  return true;
}

/** Decides one request. */
function limit(
  http: Http,
  req: FrameworkRequest,
  raw: ServerResponse,
  refuse: (outcome: Outcome) => never | Promise<never>,
): boolean | Promise<boolean> {
  const outcome = http.handle(req);
  if (!(outcome instanceof Promise)) return decide(outcome, req, raw, refuse);
  return outcome.then((o) => decide(o, req, raw, refuse));
}

/**
 * A GraphQL refusal is thrown for the GraphQL layer to report: it writes the response after the
 * resolvers ran, so one written here would clash with it. The header fields are set all the same.
 * Rejected rather than thrown, so that every field of the request meets the one refusal.
 */
function refuseGraphql(outcome: Outcome): Promise<never> {
  return Promise.reject(new RateLimitException(outcome.status, outcome.decision, graphqlRefusal(outcome)));
}

/**
 * Limits HTTP requests by the module's options or a handler's `@RateLimit()` (APP_GUARD or `@UseGuards`);
 * the decision is on `req.rateLimit`; errors of the callbacks and of `handler` go to Nest's exception layer.
 * GraphQL over HTTP is limited by the request behind the resolver; a context without one (rpc, ws) is
 * let through, with ERR_SLUICE_UNLIMITED_CONTEXT.
 */
@Injectable()
export class SluiceGuard implements CanActivate {
  private readonly limits: RouteLimits;

  // By token: the build emits no constructor types for Nest to read. Optional, so that a guard used
  // without the module says what to import, not Nest's DI error naming an internal class.
  constructor(@Optional() @Inject(RouteLimits) limits: RouteLimits | undefined) {
    if (limits === undefined) {
      throw new Error(
        "SluiceGuard needs SluiceModule.forRoot(options) (or forRootAsync) in the imports of your root module: @Module({ imports: [SluiceModule.forRoot({ limit: 100, window: '1m' })] }), imported from @sluice/nestjs",
      );
    }
    this.limits = limits;
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const type = context.getType<string>();
    if (type === 'http') {
      const req = context.switchToHttp().getRequest<FrameworkRequest>();
      const http = this.limits.of(context.getHandler(), context.getClass(), req);
      if (http === null) return true;
      const res = context.switchToHttp().getResponse<PlatformResponse>();
      return limit(http, req, rawOf(res), (outcome) => refuse(http, outcome, req, res));
    }
    // GraphQL's context is the resolver's third argument (@nestjs/graphql), read by shape.
    const exchange: GraphqlExchange | undefined =
      type === 'graphql' ? graphqlExchange(context.getArgs()[2]) : undefined;
    const http = this.limits.of(context.getHandler(), context.getClass(), exchange?.req);
    if (http === null) return true;
    if (exchange === undefined) {
      const where = `${context.getClass().name}.${context.getHandler().name}`;
      http.warn(WarningCodes.UNLIMITED_CONTEXT, `${where} in a '${type}' context`);
      return true;
    }
    const { req, res } = exchange;
    return oncePerRequest(req, http, () => limit(http, req, res, refuseGraphql));
  }

  /** Forgets this request's subject (and its ban) under the limit that decided it: e.g. after a good login. */
  reset(req: object): Promise<void> {
    return this.limits.decidedBy(req).reset(req as FrameworkRequest);
  }

  /** The subject this request maps to under the limit that decided it (`ip:…`, `id:…`, credentials hashed). */
  async subjectOf(req: object): Promise<string> {
    return this.limits.decidedBy(req).subjectOf(req as FrameworkRequest);
  }
}

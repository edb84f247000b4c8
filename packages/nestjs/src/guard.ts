import type { ServerResponse } from 'node:http';
import { type CanActivate, type ExecutionContext, HttpException, Inject, Injectable } from '@nestjs/common';
import type { Decision, FrameworkRequest, HttpOutcome } from '@sluice/core';
import { abandonIfLate, PROBLEM_CONTENT_TYPE, passOn, setDecision } from '@sluice/core';
import { RouteLimits } from './limits.js';

interface PlatformResponse {
  readonly raw?: ServerResponse; // Fastify's reply has it; Express's `res` is Node's response itself
  status(code: number): { type?(type: string): { send(body: unknown): unknown } };
}

const rawOf = (res: PlatformResponse) => res.raw ?? (res as unknown as ServerResponse);

/** Thrown once the guard answered a refusal itself, so that no handler runs (a catch-all filter should leave it). */
export class RateLimitException extends HttpException {
  /** `decision.reason` says which refusal: 'limit', 'ban', 'deny-list', 'store-error'. */
  constructor(
    status: number,
    readonly decision?: Decision,
  ) {
    super({ status, policy: decision?.policy }, status);
  }
}

type Outcome = HttpOutcome<FrameworkRequest>;

/** Answers a refusal as the Express and Fastify adapters do (Fastify's through its reply), then stops Nest. */
function refuse(outcome: Outcome, req: FrameworkRequest, res: PlatformResponse): never | Promise<never> {
  const stop = () => {
    throw new RateLimitException(outcome.status, outcome.decision);
  };
  const status = res.status(outcome.status);
  if (outcome.handler !== undefined) {
    const answered: unknown = outcome.handler(req, res, outcome.decision!);
    if (answered instanceof Promise) return answered.then(stop);
  } else if (res.raw !== undefined) status.type!(PROBLEM_CONTENT_TYPE).send(outcome.body);
  else rawOf(res).setHeader('Content-Type', PROBLEM_CONTENT_TYPE).end(outcome.body);
  return stop();
}

// Held (leaky bucket with delay) before it passes; a client gone meanwhile is not let through.
function held(outcome: Outcome, raw: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => passOn(outcome, raw, resolve.bind(null, true), resolve.bind(null, false)));
}

function decide(outcome: Outcome, req: FrameworkRequest, res: PlatformResponse): boolean | Promise<boolean> {
  const raw = rawOf(res);
  // Answered meanwhile, or the client left: the charge is back, and nothing runs for nobody.
  if (abandonIfLate(outcome, raw)) return false;
  if (outcome.decision !== undefined) setDecision(req, outcome.decision);
  const { headers } = outcome;
  // On Node's response on either platform: Fastify's writeHead merges them with its own.
  for (const name in headers) raw.setHeader(name, headers[name]!);
  if (!outcome.pass) return refuse(outcome, req, res);
  if (outcome.delayMs > 0) return held(outcome, raw);
  passOn(outcome, raw, () => {});
  return true;
}

/**
 * Limits HTTP requests by the module's options or a handler's `@RateLimit()` (APP_GUARD or `@UseGuards`);
 * the decision is on `req.rateLimit`; errors of the callbacks and of `handler` go to Nest's exception layer.
 */
@Injectable()
export class SluiceGuard implements CanActivate {
  // By token: the build emits no constructor types for Nest to read.
  constructor(@Inject(RouteLimits) private readonly limits: RouteLimits) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<FrameworkRequest>();
    const http = this.limits.of(context.getHandler(), context.getClass(), req);
    if (http === null) return true;
    const res = context.switchToHttp().getResponse<PlatformResponse>();
    const outcome = http.handle(req);
    if (!(outcome instanceof Promise)) return decide(outcome, req, res);
    return outcome.then((o) => decide(o, req, res));
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

/**
 * GraphQL over HTTP, for adapters whose guards run per resolver (NestJS): the HTTP exchange behind a
 * resolver, read from its GraphQL context by shape (no GraphQL package is loaded), one decision per
 * request and limiter, and the refusal as a GraphQL error reports it.
 */
import type { ServerResponse } from 'node:http';
import type { HttpOutcome } from '../handle.js';
import type { ProblemBody } from '../responses.js';
import type { FrameworkRequest } from './response.js';

/** The HTTP request behind a resolver, and Node's response to it. */
export interface GraphqlExchange {
  readonly req: FrameworkRequest;
  readonly res: ServerResponse;
}

type Shape = {
  req?: { headers?: unknown; res?: ServerResponse };
  res?: ServerResponse;
  reply?: { raw?: ServerResponse };
};

/**
 * The exchange in a GraphQL context as @nestjs/graphql's drivers build it: `req`, and `res`, `req.res`
 * (Express) or Fastify's `reply`. Undefined without both (a subscription over WebSocket, or Fastify's
 * default context, which holds no reply): there are no headers to set nor a response end to wait for.
 */
export function graphqlExchange(context: unknown): GraphqlExchange | undefined {
  const { req, res, reply } = (context ?? {}) as Shape;
  if (typeof req?.headers !== 'object') return undefined;
  const raw = res ?? req.res ?? reply?.raw;
  return raw === undefined ? undefined : { req: req as FrameworkRequest, res: raw };
}

/** What is decided for each request and limiter; requests are kept only as long as they live. */
const decided = new WeakMap<object, Map<object, unknown>>();

/**
 * `decide` run once per request and limiter: a GraphQL request runs the guard of every field it selects
 * (and of every operation of a batch), and is one request to limit, so each field gets the same answer.
 */
export function oncePerRequest<T>(req: object, limiter: object, decide: () => T): T {
  let byLimiter = decided.get(req);
  if (byLimiter === undefined) {
    byLimiter = new Map();
    decided.set(req, byLimiter);
  }
  if (!byLimiter.has(limiter)) byLimiter.set(limiter, decide());
  return byLimiter.get(limiter) as T;
}

/**
 * A refusal's GraphQL error `extensions`: the problem details an HTTP client gets in the body, with a
 * `code` from the status as GraphQL servers name them (`TOO_MANY_REQUESTS`, `FORBIDDEN`, …).
 */
export function graphqlRefusal(outcome: Pick<HttpOutcome, 'body'>): ProblemBody & { code: string } {
  const problem = JSON.parse(outcome.body!) as ProblemBody;
  return { code: problem.title.toUpperCase().replace(/\W+/g, '_'), ...problem };
}

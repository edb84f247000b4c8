import type { ServerResponse } from 'node:http';
import {
  createHttpHandler,
  type HttpHandler,
  type HttpOutcome,
  MemoryStore,
  PROBLEM_CONTENT_TYPE,
  type RequestReader,
} from '@sluice/core';
import type {
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  RouteOptions,
} from 'fastify';
import fp from 'fastify-plugin';
import {
  inRoute,
  mergeRouteOptions,
  parseHook,
  readRouteConfig,
  splitPluginOptions,
} from './route-config.js';
import type { RouteRateLimitOptions, SluiceFastifyOptions, SluiceHook } from './types.js';

type Done = (error?: Error) => void;
type Hook = (request: FastifyRequest, reply: FastifyReply, done: Done) => void;
type Http = HttpHandler<FastifyRequest, FastifyReply>;
type Outcome = HttpOutcome<FastifyRequest, FastifyReply>;

/** One limit as it runs on a route: the hook it runs in and the hook function. */
interface RouteLimit {
  readonly hook: SluiceHook;
  readonly run: Hook;
}

function first(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/** `'ip'` is `request.ip`, so Fastify's `trustProxy` decides whether X-Forwarded-For counts. */
const reader: RequestReader<FastifyRequest> = {
  ip: (request) => request.ip,
  header: (request, name) => first(request.headers[name]),
  query: (request, name) => first((request.query as Record<string, unknown> | undefined)?.[name]),
};

/** Calls `finish` with the status sent, or 0 when the connection closes first (`finish` ignores repeats). */
function afterResponse(res: ServerResponse, finish: (statusCode: number) => void): void {
  res.once('finish', () => finish(res.statusCode));
  res.once('close', () => finish(0));
}

/** Holds a passing request for `delayMs`; a client gone meanwhile is not passed on. */
function hold(res: ServerResponse, delayMs: number, done: Done): void {
  const gone = () => clearTimeout(timer);
  const timer = setTimeout(() => {
    res.off('close', gone);
    done();
  }, delayMs);
  res.once('close', gone);
}

function block(outcome: Outcome, request: FastifyRequest, reply: FastifyReply, done: Done): void {
  reply.code(outcome.status);
  if (outcome.handler === undefined) {
    reply.type(PROBLEM_CONTENT_TYPE).send(outcome.body);
    return;
  }
  try {
    const answered: unknown = outcome.handler(request, reply, outcome.decision!);
    if (answered instanceof Promise) answered.catch(done);
  } catch (error) {
    done(error as Error);
  }
}

function apply(outcome: Outcome, request: FastifyRequest, reply: FastifyReply, done: Done): void {
  if (outcome.decision !== undefined) request.rateLimit = outcome.decision;
  reply.headers(outcome.headers);
  if (!outcome.pass) block(outcome, request, reply, done);
  else {
    if (outcome.finish !== undefined) afterResponse(reply.raw, outcome.finish);
    if (outcome.delayMs > 0) hold(reply.raw, outcome.delayMs, done);
    else done();
  }
}

/** The hook function of one limit: a plain value from a local store answers without a promise. */
function hookOf(http: Http): Hook {
  return function sluice(request, reply, done) {
    const outcome = http.handle(request);
    if (outcome instanceof Promise) outcome.then((o) => apply(o, request, reply, done), done);
    else apply(outcome, request, reply, done);
  };
}

/** Puts `run` after the route's own hooks of that kind, on a new array (the user's may be shared). */
function addRouteHook(route: RouteOptions, limit: RouteLimit): void {
  const hooks = route as unknown as Record<SluiceHook, Hook | Hook[] | undefined>;
  const existing = hooks[limit.hook];
  hooks[limit.hook] = existing === undefined ? [limit.run] : [...[existing].flat(), limit.run];
}

async function plugin(fastify: FastifyInstance, options: SluiceFastifyOptions): Promise<void> {
  const { global, defaults } = splitPluginOptions(options);
  // One store for every limiter of this registration that names none: routes sharing a name share counters.
  let shared: MemoryStore | undefined;
  const build = (options: RouteRateLimitOptions, name: string): RouteLimit => {
    const { hook, ...http } = options;
    if (http.limiter === undefined) {
      http.name ??= name;
      http.store ??= shared ??= new MemoryStore();
    }
    return { hook: parseHook(hook, 'hook'), run: hookOf(createHttpHandler(http, reader)) };
  };

  let globalLimit: RouteLimit | undefined;
  if (global) globalLimit = build(defaults, 'global');
  else {
    // Only defaults for the routes that opt in: checked now, with a stand-in policy if they set none.
    const { hook: _, ...http } = defaults;
    const standIn = http.limiter === undefined && http.policies === undefined;
    createHttpHandler(
      standIn ? { ...http, limit: http.limit ?? 1, window: http.window ?? 1, name: 'global' } : http,
      reader,
    );
  }

  if (!fastify.hasRequestDecorator('rateLimit')) fastify.decorateRequest('rateLimit', undefined);

  // A route's own limit, per options object and route name; Fastify's automatic HEAD route carries its
  // GET route's options object and shares that limit, as it runs the same handler.
  const own = new WeakMap<object, Map<string, RouteLimit>>();
  fastify.addHook('onRoute', (route) => {
    const name = `${[route.method].flat().join(',')} ${route.url}`;
    const config = readRouteConfig(route.config?.rateLimit, name);
    if (config === false) return;
    if (config === undefined) {
      if (globalLimit !== undefined) addRouteHook(route, globalLimit);
      return;
    }
    let byName = own.get(config);
    if (byName === undefined) {
      byName = new Map();
      own.set(config, byName);
    }
    let limit = byName.get(name) ?? (route.method === 'HEAD' ? byName.get(`GET ${route.url}`) : undefined);
    if (limit === undefined) {
      try {
        limit = build(mergeRouteOptions(defaults, config), name);
      } catch (error) {
        inRoute(error, name);
      }
      byName.set(name, limit);
    }
    addRouteHook(route, limit);
  });
}

// Typed with the options alone: fastify-plugin's inferred type names generics that early Fastify 4
// types lack, and the published declarations must hold for the whole peer range (test/consumers).
/** The Sluice rate-limiting plugin: global limits, `config.rateLimit` per route, `request.rateLimit`. */
export const sluice: FastifyPluginCallback<SluiceFastifyOptions> = fp<SluiceFastifyOptions>(plugin, {
  name: '@sluice/fastify',
  fastify: '4.x || 5.x',
});

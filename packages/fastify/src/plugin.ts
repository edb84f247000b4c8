import {
  abandonIfLate,
  callHandler,
  checkTrustProxy,
  createHttpHandler,
  frameworkReader,
  type HttpHandler,
  type HttpOutcome,
  MemoryStore,
  mergeHttpOptions,
  PROBLEM_CONTENT_TYPE,
  passOn,
  WarningCodes,
  withHandlerApi,
} from '@sluice/core';
import type {
  FastifyInstance,
  FastifyPluginCallback,
  FastifyReply,
  FastifyRequest,
  RouteOptions,
} from 'fastify';
import fp from 'fastify-plugin';
import { inRoute, parseHook, readRouteConfig, splitPluginOptions } from './route-config.js';
import type { RateLimitHook, RouteRateLimitOptions, SluiceFastifyOptions, SluiceHook } from './types.js';

type Done = (error?: Error) => void;
type Hook = (request: FastifyRequest, reply: FastifyReply, done: Done) => void;
type Http = HttpHandler<FastifyRequest, FastifyReply>;
type Outcome = HttpOutcome<FastifyRequest, FastifyReply>;

/** The plugin's own options, and a route config's: listed when an option is unknown. */
const PLUGIN_KEYS = ['global', 'hook'];
const ROUTE_KEYS = ['hook'];

/** One limit as it runs on a route: the hook it runs in and the hook function. */
interface RouteLimit {
  readonly hook: SluiceHook;
  readonly run: Hook;
}

function apply(http: Http, outcome: Outcome, request: FastifyRequest, reply: FastifyReply, done: Done): void {
  // The reply was sent meanwhile, or the client left: nothing runs for nobody.
  if (abandonIfLate(outcome, reply.raw)) return;
  if (outcome.decision !== undefined) request.rateLimit = outcome.decision;
  reply.headers(outcome.headers);
  if (outcome.pass) {
    passOn(outcome, reply.raw, done);
    return;
  }
  reply.code(outcome.status);
  if (outcome.handler === undefined) reply.type(PROBLEM_CONTENT_TYPE).send(outcome.body);
  else
    callHandler(outcome, request, reply, done, () => {
      // A handler that returned a body (errorResponseBuilder's shape) sent nothing: Sluice answers.
      if (reply.sent) return;
      http.warn(WarningCodes.HANDLER_NO_ANSWER);
      reply.type(PROBLEM_CONTENT_TYPE).send(outcome.body);
    });
}

/**
 * The hook function of one limit: a plain value from a local store answers without a promise. A
 * decision that comes back after the reply was sent (or the client left) gives back its charge and
 * leaves the request alone; anything else that fails goes to `done`.
 */
function hookOf(http: Http): Hook {
  return function sluice(request, reply, done) {
    const outcome = http.handle(request);
    if (!(outcome instanceof Promise)) return apply(http, outcome, request, reply, done);
    outcome.then((o) => {
      try {
        apply(http, o, request, reply, done);
      } catch (error) {
        done(error as Error);
      }
    }, done);
  };
}

/**
 * A node of `printRoutes({ commonPrefix: false })`'s tree: its indent (four columns a level), the part
 * of the path it adds to its parent's, and the methods of the route that ends there, if one does:
 * `│   ├── users (GET, HEAD)` under `└── /api` is `/api` + `users`.
 */
const TREE_LINE = /^((?:│ {3}| {4})*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?/;

/** `${method} ${path}` of every route of the app, each path in full. */
function routesOf(fastify: FastifyInstance): string[] {
  const routes: string[] = [];
  const parents: string[] = [];
  for (const line of fastify.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = TREE_LINE.exec(line);
    if (match === null) continue;
    const depth = match[1]!.length / 4;
    parents.length = depth;
    const path = (parents[depth - 1] ?? '') + match[2]!;
    parents.push(path);
    for (const method of match[3]?.split(', ') ?? []) routes.push(`${method} ${path}`);
  }
  return routes;
}

/** Warns once the app is ready if it has routes the plugin never saw (ERR_SLUICE_UNLIMITED_ROUTES). */
function warnOfUnseenRoutes(
  fastify: FastifyInstance,
  seen: ReadonlySet<string>,
  http: Http,
  done: Done,
): void {
  // A prefixed route on `/` is served at `/api` and `/api/`, with one `onRoute` (for `/api`).
  const unseen = routesOf(fastify).filter(
    (route) => !seen.has(route) && !seen.has(route.replace(/(.)\/$/, '$1')),
  );
  if (unseen.length > 0) {
    const shown = unseen.slice(0, 5).join(', ') + (unseen.length > 5 ? ` and ${unseen.length - 5} more` : '');
    http.warn('ERR_SLUICE_UNLIMITED_ROUTES', `${unseen.length} route(s) (${shown})`);
  }
  done();
}

/**
 * `validate` for the handler that only checks the defaults of a `global: false` registration. It
 * decides nothing, so it must not warn that it limits by an unverified credential: each route that
 * opts in builds its own limiter from these defaults and warns for itself, under its own name. Any
 * other value is kept as given, so a wrong one is still reported at registration.
 */
function validateForCheckOnly(validate: unknown): unknown {
  const code = WarningCodes.UNVERIFIED_CREDENTIAL;
  if (validate === undefined || validate === true) return { [code]: false };
  if (typeof validate !== 'object' || validate === null || Array.isArray(validate)) return validate;
  const own = (validate as Record<string, unknown>)[code];
  return own === undefined || typeof own === 'boolean' ? { ...validate, [code]: false } : validate;
}

/** `app.rateLimit()`'s hook: `run`, with the limiter and the request's subject at hand. */
function exposed(http: Http, run: Hook): RateLimitHook {
  return withHandlerApi(run, http) as unknown as RateLimitHook;
}

/** What `app.rateLimit()` needs of a registration: its global limit and how to build one. */
interface Registration {
  global(): { http: Http; run: Hook };
  build(options: RouteRateLimitOptions, name: string): { http: Http; run: Hook };
  /** `${method} ${url}` of the routes the global limit already runs on. */
  readonly globalRoutes: Set<string>;
}

/** Registrations by the instance they were registered on; `app.rateLimit()` finds the nearest. */
const registrations = new WeakMap<object, Registration>();

function registrationOf(instance: object): Registration {
  for (let at: object | null = instance; at !== null; at = Object.getPrototypeOf(at)) {
    const found = registrations.get(at);
    if (found !== undefined) return found;
  }
  throw new Error('app.rateLimit() needs the @sluice/fastify plugin registered on this instance or a parent');
}

function rateLimit(this: FastifyInstance, options?: RouteRateLimitOptions): RateLimitHook {
  const registration = registrationOf(this);
  if (options !== undefined) {
    const { http, run } = registration.build(options, 'hook');
    return exposed(http, run);
  }
  const { http, run } = registration.global();
  // A route that has the global limit already is charged once, by that hook.
  const once: Hook = (request, reply, done) => {
    if (registration.globalRoutes.has(`${request.method} ${request.routeOptions.url}`)) return done();
    run(request, reply, done);
  };
  return exposed(http, once);
}

/**
 * Where a HEAD route finds the limit it shares. Fastify's automatic HEAD route carries its GET route's
 * config object and runs the same handler, so it counts with that route whatever methods it declared
 * (`['GET', 'POST']` included). Under a prefix, a GET route on `/` is also served at `/v1/` without an
 * `onRoute` of its own, but its HEAD route on `/v1/` has one: it belongs to `GET /v1`.
 */
function headLookup(url: string): string[] {
  return url.length > 1 && url.endsWith('/') ? [`GET ${url}`, `GET ${url.slice(0, -1)}`] : [`GET ${url}`];
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
  const build = (
    options: RouteRateLimitOptions,
    name: string,
    adapterKeys: readonly string[] = ROUTE_KEYS,
  ): RouteLimit & { http: Http } => {
    const { hook, ...http } = options;
    if (http.limiter === undefined) {
      http.name ??= name;
      http.store ??= shared ??= new MemoryStore();
    }
    // `'ip'` is `request.ip`, so Fastify's `trustProxy` decides whether X-Forwarded-For counts.
    const handler = createHttpHandler(http, frameworkReader, adapterKeys);
    return { hook: parseHook(hook, 'hook'), run: hookOf(handler), http: handler };
  };

  let globalLimit: (RouteLimit & { http: Http }) | undefined;
  let checked: Http;
  if (global) {
    globalLimit = build(defaults, 'global', PLUGIN_KEYS);
    checked = globalLimit.http;
  } else {
    // Only defaults for the routes that opt in: checked now, with a stand-in policy if they set none.
    const { hook: _, ...given } = defaults;
    const http = { ...given, validate: validateForCheckOnly(given.validate) } as typeof given;
    const standIn = http.limiter === undefined && http.policies === undefined;
    checked = createHttpHandler(
      standIn ? { ...http, limit: http.limit ?? 1, window: http.window ?? '1s', name: 'global' } : http,
      frameworkReader,
      PLUGIN_KEYS,
    );
  }
  checkTrustProxy(fastify, checked);
  const globalRoutes = new Set<string>();
  registrations.set(fastify, {
    global: () => (globalLimit ??= build(defaults, 'global')),
    build: (options, name) => build(mergeHttpOptions(defaults, options), name),
    globalRoutes,
  });

  if (!fastify.hasRequestDecorator('rateLimit')) fastify.decorateRequest('rateLimit', undefined);
  if (!fastify.hasDecorator('rateLimit')) fastify.decorate('rateLimit', rateLimit);

  // A route's own limit, per options object and `${method} ${url}` of each method the route declares.
  const own = new WeakMap<object, Map<string, RouteLimit>>();
  // Every route this plugin saw: one it never saw (declared before it, or outside its scope) is not limited.
  const seen = new Set<string>();
  if (global) fastify.addHook('onReady', (done) => warnOfUnseenRoutes(fastify, seen, checked, done));
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) seen.add(`${method} ${route.url}`);
    const name = `${[route.method].flat().join(',')} ${route.url}`;
    const config = readRouteConfig(route.config?.rateLimit, name);
    if (config === false) return;
    if (config === undefined) {
      if (globalLimit !== undefined) {
        addRouteHook(route, globalLimit);
        for (const method of [route.method].flat()) globalRoutes.add(`${method} ${route.url}`);
      }
      return;
    }
    let byKey = own.get(config);
    if (byKey === undefined) {
      byKey = new Map();
      own.set(config, byKey);
    }
    const keys = [route.method].flat().map((method) => `${method} ${route.url}`);
    let limit = (route.method === 'HEAD' ? headLookup(route.url) : keys)
      .map((key) => byKey.get(key))
      .find(Boolean);
    if (limit === undefined) {
      try {
        limit = build(mergeHttpOptions(defaults, config), name);
      } catch (error) {
        inRoute(error, name);
      }
    }
    for (const key of keys) byKey.set(key, limit);
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

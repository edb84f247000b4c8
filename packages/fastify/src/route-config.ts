import { ErrorCodes, SluiceConfigError } from '@sluice/core';
import type { RouteRateLimitOptions, SluiceFastifyOptions, SluiceHook } from './types.js';

/** Options that make up the policy. `policies` and the shorthand exclude each other. */
const SHORTHAND_KEYS = ['limit', 'window', 'algorithm', 'burst', 'delay', 'scope'] as const;
/** Shorthand options that only some algorithms take. */
const ALGORITHM_SPECIFIC_KEYS = new Set<string>(['burst', 'delay']);
/** Options that build a limiter: a route that gives `limiter` inherits none of them. */
const LIMITER_BUILDING_KEYS = new Set<string>([
  'policies',
  ...SHORTHAND_KEYS,
  'store',
  'name',
  'prefix',
  'onStoreError',
  'storeTimeout',
]);

const HOOKS: readonly SluiceHook[] = ['onRequest', 'preHandler'];

function isSet(options: object, key: string): boolean {
  return (options as Record<string, unknown>)[key] !== undefined;
}

/**
 * A route's options: the route's own where it sets them, the plugin's elsewhere, with the rules that
 * keep the result coherent. `name` is never inherited (a route's limiter is its own unless it names a
 * shared one); a route's `limiter` drops every inherited option that would build one, and building
 * options drop an inherited `limiter`; `policies` and the shorthand replace each other as a whole;
 * `burst` and `delay` are not inherited when the route picks another algorithm.
 */
export function mergeRouteOptions(
  defaults: RouteRateLimitOptions,
  route: RouteRateLimitOptions,
): RouteRateLimitOptions {
  const merged: Record<string, unknown> = {};
  const routeHasShorthand = SHORTHAND_KEYS.some((key) => isSet(route, key));
  const routeBuildsLimiter = Object.keys(route).some(
    (key) => LIMITER_BUILDING_KEYS.has(key) && isSet(route, key),
  );
  const otherAlgorithm =
    route.algorithm !== undefined && route.algorithm !== (defaults.algorithm ?? 'sliding-window');
  for (const [key, value] of Object.entries(defaults)) {
    if (value === undefined || key === 'name') continue;
    if (isSet(route, 'limiter') && LIMITER_BUILDING_KEYS.has(key)) continue;
    if (key === 'limiter' && routeBuildsLimiter) continue;
    if (key === 'policies' && routeHasShorthand) continue;
    if ((SHORTHAND_KEYS as readonly string[]).includes(key) && isSet(route, 'policies')) continue;
    if (ALGORITHM_SPECIFIC_KEYS.has(key) && otherAlgorithm) continue;
    merged[key] = value;
  }
  for (const [key, value] of Object.entries(route)) if (value !== undefined) merged[key] = value;
  return merged as RouteRateLimitOptions;
}

/** The hook option, checked. */
export function parseHook(value: unknown, option: string): SluiceHook {
  if (value === undefined) return 'onRequest';
  if (!HOOKS.includes(value as SluiceHook)) {
    throw new SluiceConfigError(
      ErrorCodes.INVALID_OPTION,
      option,
      `expected 'onRequest' or 'preHandler'; got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : typeof value}`,
    );
  }
  return value as SluiceHook;
}

/** Splits the plugin's options into its own (`global`, `hook`) and the defaults of every route. */
export function splitPluginOptions(options: SluiceFastifyOptions): {
  global: boolean;
  defaults: RouteRateLimitOptions;
} {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SluiceConfigError(ErrorCodes.INVALID_OPTION, 'options', 'expected an object');
  }
  const { global = true, ...defaults } = options;
  if (typeof global !== 'boolean') {
    throw new SluiceConfigError(
      ErrorCodes.INVALID_OPTION,
      'global',
      `expected a boolean; got ${typeof global}`,
    );
  }
  parseHook(defaults.hook, 'hook');
  return { global, defaults };
}

/** A route's `config.rateLimit`: false (not limited), undefined (the global limit, if any), or its options. */
export function readRouteConfig(value: unknown, route: string): RouteRateLimitOptions | false | undefined {
  if (value === undefined || value === false) return value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SluiceConfigError(
      ErrorCodes.INVALID_OPTION,
      'config.rateLimit',
      `of route ${route}: expected an options object or false; got ${value === null ? 'null' : typeof value}`,
    );
  }
  return value as RouteRateLimitOptions;
}

/** Rethrows a configuration error of a route's options naming the route. */
export function inRoute(error: unknown, route: string): never {
  if (!(error instanceof SluiceConfigError)) throw error;
  const detail = error.message.startsWith(`${error.option}: `)
    ? error.message.slice(error.option.length + 2)
    : error.message;
  // Core names shorthand options `options.limit`; here they sit under the route's config.rateLimit.
  const option = error.option.replace(/^options\b\.?/, '');
  const path = option === '' ? 'config.rateLimit' : `config.rateLimit.${option}`;
  throw new SluiceConfigError(error.code, path, `${detail} (route ${route})`);
}

import type { HttpOptions } from './types.js';

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

function isSet(options: object, key: string): boolean {
  return (options as Record<string, unknown>)[key] !== undefined;
}

/**
 * A route's options (Fastify's `config.rateLimit`, Nest's `@RateLimit()`): the route's own where it
 * sets them, the app-wide ones elsewhere, with the rules that keep the result coherent. `name` is
 * never inherited (a route's limiter is its own unless it names a shared one); a route's `limiter` drops every inherited option that would build one, and building
 * options drop an inherited `limiter`; `policies` and the shorthand replace each other as a whole;
 * `burst` and `delay` are not inherited when the route picks another algorithm.
 */
export function mergeHttpOptions<T extends HttpOptions<never, never>>(defaults: T, route: T): T {
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
  return merged as T;
}

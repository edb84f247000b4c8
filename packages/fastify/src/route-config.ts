import { ErrorCodes, SluiceConfigError } from '@sluice/core';
import type { RouteRateLimitOptions, SluiceFastifyOptions, SluiceHook } from './types.js';

const HOOKS: readonly SluiceHook[] = ['onRequest', 'preHandler'];

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
  // The other unknown options of the same error, too (they read `timeWindow: unknown option`).
  const others = detail.replace(
    /; (?:options\.)?([\w.]+): unknown option/g,
    '; config.rateLimit.$1: unknown option',
  );
  throw new SluiceConfigError(error.code, path, `${others} (route ${route})`);
}

import type { HttpHandler } from './handle.js';
import type { ProxyTrust } from './types.js';
import { WarningCodes } from './validate.js';

/**
 * Apps whose setting was told of (or is fine): a setting of the app is told once, not once per
 * limiter; an app is marked only once a limiter that has the warning on has told it.
 */
const checked = new WeakSet<object>();

/**
 * The Fastify instance that holds Fastify's own options (a symbol-keyed field: `initialConfig` leaves
 * `trustProxy` out): the root that a plugin's instance inherits from; undefined for anything else.
 */
function fastifyRoot(app: object): { owner: object; trustProxy: unknown } | undefined {
  for (let at: object | null = app; at !== null; at = Object.getPrototypeOf(at)) {
    const key = Object.getOwnPropertySymbols(at).find((k) => k.description === 'fastify.options');
    if (key !== undefined) {
      return { owner: at, trustProxy: (at as Record<symbol, { trustProxy?: unknown }>)[key]?.trustProxy };
    }
  }
  return undefined;
}

/**
 * Whether this Fastify version applies a hop count to X-Forwarded-For: 5.12.1 took it out (a count
 * cannot tell a proxy from a client that connects directly), so `request.ip` stays the proxy's.
 */
function appliesHopCount(version: string | undefined): boolean {
  const [major = 0, minor = 0, patch = 0] = (version ?? '').split('.').map((n) => Number.parseInt(n, 10));
  if (major !== 5) return major < 5;
  return minor < 12 || (minor === 12 && patch < 1);
}

/** Express's `trust proxy` setting (app.get with one argument reads it); undefined for anything else. */
function expressTrust(app: object): unknown {
  const express = app as { get?: (setting: string) => unknown; set?: unknown };
  if (typeof express.get !== 'function' || typeof express.set !== 'function') return undefined;
  return express.get('trust proxy');
}

/**
 * How the app trusts proxies (Express `trust proxy`, Fastify `trustProxy`): not at all, by hop count
 * or wholesale (a number or true), or by address (names, addresses, ranges, a function); undefined
 * for an app that is neither.
 */
export function trustOf(app: unknown): ProxyTrust | undefined {
  if ((typeof app !== 'object' && typeof app !== 'function') || app === null) return undefined;
  const fastify = fastifyRoot(app);
  const setting = fastify === undefined ? expressTrust(app) : fastify.trustProxy;
  if (fastify === undefined && setting === undefined) return undefined;
  if (setting === undefined || setting === false || setting === 0) return 'none';
  return setting === true || typeof setting === 'number' ? 'count' : 'address';
}

/**
 * Warns, once per app, of a trust-proxy setting that trusts every client (Express `trust proxy` true,
 * Fastify `trustProxy: true`), or one that Fastify does not apply (a hop count, from Fastify 5.12.1:
 * `request.ip` stays the proxy's). `app` is the Express app or the Fastify instance, under NestJS too;
 * anything else is left.
 */
export function checkTrustProxy(app: unknown, http: Pick<HttpHandler<never>, 'warn'>): void {
  if ((typeof app !== 'object' && typeof app !== 'function') || app === null) return;
  const fastify = fastifyRoot(app);
  const owner = fastify?.owner ?? app;
  if (checked.has(owner)) return;
  const told = (
    code: typeof WarningCodes.TRUST_PROXY_ALL | typeof WarningCodes.TRUST_PROXY_IGNORED,
    detail?: string,
  ) => {
    if (http.warn(code, detail)) checked.add(owner);
  };
  if (fastify === undefined) {
    if (expressTrust(app) === true) told(WarningCodes.TRUST_PROXY_ALL);
    else checked.add(owner);
    return;
  }
  const { trustProxy } = fastify;
  if (trustProxy === true) told(WarningCodes.TRUST_PROXY_ALL);
  // 0 trusts nothing: there is no hop count to ignore.
  else if (
    typeof trustProxy === 'number' &&
    trustProxy > 0 &&
    !appliesHopCount((owner as { version?: string }).version)
  ) {
    told(WarningCodes.TRUST_PROXY_IGNORED, `trustProxy: ${trustProxy} (a hop count)`);
  } else checked.add(owner);
}

import type { HttpHandler } from './handle.js';
import { WarningCodes } from './validate.js';

/** Apps whose setting was checked: a setting of the app is told once, not once per limiter. */
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
 * Warns, once per app, of a trust-proxy setting that trusts every client (Express `trust proxy` true,
 * Fastify `trustProxy: true`), or one that Fastify 5 does not apply (a hop count: `request.ip` stays
 * the proxy's). `app` is the Express app or the Fastify instance, under NestJS too; anything else is left.
 */
export function checkTrustProxy(app: unknown, http: Pick<HttpHandler<never>, 'warn'>): void {
  if ((typeof app !== 'object' && typeof app !== 'function') || app === null) return;
  const fastify = fastifyRoot(app);
  const owner = fastify?.owner ?? app;
  if (checked.has(owner)) return;
  checked.add(owner);
  if (fastify === undefined) {
    // Express: app.get(setting) with one argument reads the setting.
    const express = app as { get?: (setting: string) => unknown; set?: unknown };
    if (typeof express.get === 'function' && typeof express.set === 'function') {
      if (express.get('trust proxy') === true) http.warn(WarningCodes.TRUST_PROXY_ALL);
    }
    return;
  }
  const { trustProxy } = fastify;
  if (trustProxy === true) http.warn(WarningCodes.TRUST_PROXY_ALL);
  else if (
    typeof trustProxy === 'number' &&
    Number.parseInt((owner as { version?: string }).version ?? '0', 10) >= 5
  ) {
    http.warn(WarningCodes.TRUST_PROXY_IGNORED, `trustProxy: ${trustProxy} (a hop count)`);
  }
}

import { ownPrefix } from '../../foreign-stores.js';

/**
 * rate-limit-redis 6's constructor options given to Sluice's RedisStore (the two classes share a
 * name, so its `new RedisStore({ sendCommand, prefix })` is pasted as is): what to write instead.
 * `prefix` is no store option here: keys are the limiter's, so every store and client shares them.
 */
const HINTS: Readonly<Record<string, (value: unknown) => string>> = {
  sendCommand: () =>
    'pass the Redis client itself as client: new RedisStore({ client }) (the client your sendCommand called; ioredis, node-redis, iovalkey or @upstash/redis)',
  sendCommandCluster: () =>
    'pass the cluster client itself as client: new RedisStore({ client: cluster }) (an ioredis Cluster or a node-redis createCluster())',
  prefix: (value) =>
    `the key namespace is the limiter's prefix option: createLimiter({ prefix: ${prefixOf(value)}, … }) or rateLimiter({ prefix: ${prefixOf(value)}, … })`,
  resetExpiryOnChange: () =>
    "nothing needed: Sluice's script sets each key's expiry from its policy on every change",
};

/** Their prefix as Sluice's (ownPrefix), when it is a short plain string; else a placeholder. */
function prefixOf(value: unknown): string {
  return typeof value === 'string' && /^[\w:.-]{1,64}$/.test(value) ? `'${ownPrefix(value)}'` : "'…'";
}

/** The hint (starting '; ') for an unknown RedisStore option, or '' for a name of no other library. */
export function redisStoreHint(key: string, value: unknown): string {
  const hint = Object.hasOwn(HINTS, key) ? HINTS[key] : undefined;
  return hint === undefined ? '' : `; ${hint(value)}`;
}

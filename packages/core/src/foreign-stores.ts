import { describeValue } from './errors.js';
import { isPg } from './stores/postgres/clients/pg.js';
import { isPostgresJs } from './stores/postgres/clients/postgres-js.js';

/**
 * Why a `store` (or `limiter`) that is not Sluice's was refused: what it is, when it is another
 * library's, and what to pass instead. Told apart by shape (each library's own methods), since none of
 * them is installed beside Sluice. No docs link: npm users have no docs folder.
 */

const REDIS_STORE = 'store: new RedisStore({ client }) from @sluice/core, with your Redis client';
const POSTGRES_STORE = 'a PostgreSQL client; pass store: new PostgresStore({ client }) from @sluice/core';

type Shape = Record<string, unknown>;
const has = (value: Shape, ...methods: string[]) => methods.every((m) => typeof value[m] === 'function');

/** What another library's store or limiter `value` is, and what to pass instead; undefined if none. */
export function foreignStore(value: unknown): string | undefined {
  if (isPg(value) || isPostgresJs(value)) return POSTGRES_STORE;
  if (typeof value === 'function') {
    // @fastify/rate-limit takes its store as a class.
    const proto = (value as { prototype?: Shape }).prototype;
    if (proto !== undefined && has(proto, 'incr')) return fastifyStore();
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const shape = value as Shape;
  if (has(shape, 'sendCommand', 'increment'))
    return `a RedisStore from rate-limit-redis (a store of express-rate-limit); pass ${REDIS_STORE} (the client its sendCommand called)${prefixOf(shape)}`;
  if (has(shape, 'increment', 'decrement', 'resetKey'))
    return `a store of express-rate-limit; pass ${REDIS_STORE}, or leave store out for memory`;
  if (has(shape, 'consume', 'penalty', 'reward'))
    return `a limiter of rate-limiter-flexible, which limits by itself; pass ${REDIS_STORE} (its storeClient), with its points as limit and its duration, in SECONDS, as window: '60s'`;
  if (has(shape, 'incr', 'child')) return fastifyStore();
  if (has(shape, 'increment')) return `a storage of @nestjs/throttler; pass ${REDIS_STORE}`;
  return undefined;
}

/** rate-limit-redis's `prefix` (its keys' namespace) is the limiter's `prefix` in Sluice: carried into the hint. */
function prefixOf(shape: Shape): string {
  const prefix = shape.prefix;
  if (typeof prefix !== 'string' || prefix === '') return '';
  const ours = ownPrefix(prefix);
  const colon = ours === prefix ? '' : " (Sluice writes the ':' after it)";
  return `, and its prefix ${describeValue(prefix)} as the limiter's: prefix: ${describeValue(ours)}${colon}`;
}

/**
 * Another library's key prefix as Sluice's: without its trailing ':', which Sluice writes itself
 * between the prefix and the rest of a key ('rl:' carried over as is made keys 'rl::default:…').
 */
export function ownPrefix(prefix: string): string {
  return prefix.replace(/:+$/, '') || prefix;
}

function fastifyStore(): string {
  return `a store of @fastify/rate-limit; pass ${REDIS_STORE} (its redis option's client), or leave store out for memory`;
}

/** The message for a `store` that is no Store: what it is, and what to pass. */
export function invalidStoreMessage(value: unknown): string {
  const foreign = foreignStore(value);
  if (foreign !== undefined) return `got ${foreign}`;
  return `expected a MemoryStore, RedisStore or ClusterStore from @sluice/core, or an object implementing its Store interface (consume, refund, reset, local); got ${describeValue(value)}`;
}

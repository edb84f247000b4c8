import { GIVEN_CLIENT, GIVEN_POSTGRES } from '../stores/given-client.js';
import { redactUrl } from './redact.js';

/** What the command learned of a --config module's own store client. */
export interface ModuleClient {
  /** Where the client connects, its password hidden; undefined when the client does not say. */
  readonly address: string | undefined;
  /** The client's first error since the command quieted it (a refused connection, say). */
  firstError(): Error | undefined;
}

/** ioredis's and iovalkey's Redis and Cluster, and node-redis, as far as their address and events show. */
interface Client {
  on?(event: 'error', listener: (error: Error) => void): unknown;
  listenerCount?(event: 'error'): number;
  readonly options?: {
    readonly host?: string;
    readonly port?: number;
    readonly path?: string;
    readonly db?: number;
    readonly username?: string;
    readonly password?: string;
    readonly tls?: unknown;
    /** node-redis */
    readonly url?: string;
  };
  /** ioredis Cluster (private in its types, there at run time). */
  readonly startupNodes?: ReadonlyArray<{ readonly host?: string; readonly port?: number } | string>;
}

/**
 * An app's client has no error listener of its own (it logs through ioredis, or not at all), so a
 * store that is down printed "[ioredis] Unhandled error event" at every reconnection, over the
 * command's own answer (review 28). A listener is added for the command's lifetime when the client has
 * none; its first error and the address go into the command's exit-3 line.
 */
export function quietModuleClient(store: unknown): ModuleClient {
  const client =
    typeof store === 'object' && store !== null
      ? ((store as Record<symbol, unknown>)[GIVEN_CLIENT] as Client | undefined)
      : undefined;
  let first: Error | undefined;
  if (typeof client?.on === 'function' && client.listenerCount?.('error') === 0) {
    client.on('error', (error) => {
      first ??= error;
    });
  }
  const address = client === undefined ? pgAddressOf(store) : addressOf(client);
  return { address, firstError: () => first };
}

/** pg's Pool and Client, and postgres.js, as far as their settings show where they connect. */
interface PgSettings {
  readonly connectionString?: string;
  readonly host?: string | readonly string[];
  readonly port?: number | readonly number[];
  readonly database?: string;
  readonly user?: string;
}

/** A PostgresStore's address and table: `postgres://app:***@db:5432/app (table sluice_limits)`. */
function pgAddressOf(store: unknown): string | undefined {
  const given =
    typeof store === 'object' && store !== null
      ? ((store as Record<symbol, unknown>)[GIVEN_POSTGRES] as { client: unknown; table: string } | undefined)
      : undefined;
  if (given === undefined) return undefined;
  // A pg Pool keeps its settings in `options`, a pg Client in `connectionParameters`, postgres.js in `options`.
  const c = given.client as { options?: PgSettings; connectionParameters?: PgSettings };
  const o = c.options ?? c.connectionParameters;
  const table = ` (table ${given.table})`;
  if (typeof o?.connectionString === 'string') return `${redactUrl(o.connectionString)}${table}`;
  if (o?.host === undefined) return `PostgreSQL${table}`;
  const first = <T>(v: T | readonly T[] | undefined) => (Array.isArray(v) ? v[0] : v) as T | undefined;
  const user = o.user === undefined ? '' : `${o.user}@`;
  return `postgres://${user}${first(o.host)}:${first(o.port) ?? 5432}/${o.database ?? ''}${table}`;
}

function addressOf(client: Client): string | undefined {
  if (Array.isArray(client.startupNodes)) {
    // ioredis takes URL nodes, passwords and all: only their host:port is printed.
    const nodes = client.startupNodes.map((n) =>
      typeof n === 'string'
        ? n.replace(/^.*@|^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/[/?#].*$/, '')
        : `${n.host}:${n.port}`,
    );
    return `redis-cluster://${nodes.join(',')}`;
  }
  const o = client.options;
  if (o === undefined) return undefined;
  if (typeof o.url === 'string') return redactUrl(o.url);
  if (typeof o.path === 'string') return `redis+unix://${o.path}`;
  if (typeof o.host !== 'string') return undefined;
  const auth = o.password ? `${o.username ?? ''}:***@` : '';
  const db = o.db ? `/${o.db}` : '';
  return `${o.tls ? 'rediss' : 'redis'}://${auth}${o.host}:${o.port ?? 6379}${db}`;
}

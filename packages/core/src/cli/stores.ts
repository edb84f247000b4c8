import { SluiceConfigError } from '../errors.js';
import { PostgresStore } from '../stores/postgres/postgres-store.js';
import { DEFAULT_TABLE } from '../stores/postgres/schema.js';
import { RedisStore } from '../stores/redis/redis-store.js';
import type { Store } from '../stores/store.js';
import { CliError, ExitCodes, usageError } from './exit-codes.js';
import { redactUrl } from './redact.js';

/** A store a kind opened, and how to let go of its connection. */
export interface Connection {
  readonly store: Store;
  close(): Promise<void>;
}

/** A store the command opened, with what of its URL may differ from the app's (its kind's `elsewhere`). */
export interface OpenedStore extends Connection {
  readonly elsewhere: string;
}

/**
 * One kind of store `--store <url>` can name. A new store adds one entry to STORE_KINDS: its URL
 * schemes and how to open it; nothing else in the command changes.
 */
export interface StoreKind {
  readonly schemes: readonly string[];
  /** What `--help` says of it. */
  readonly example: string;
  /**
   * For NOTHING_COUNTED: how this kind's URL can name another place than the app's store, in its own
   * terms (a Redis database number, a PostgreSQL table); the warning named only --policies (review 28).
   */
  readonly elsewhere: string;
  /** `text` is the whole `--store` value; its scheme is one of `schemes`. */
  open(text: string): Promise<Connection>;
}

/** How long to wait for a server before answering "unreachable" (exit 3) rather than retrying on. */
const CONNECT_TIMEOUT_MS = 3000;

/** The optional peer dependency, loaded only when a Redis URL is given. */
async function loadIoredis(): Promise<Pick<typeof import('ioredis'), 'Redis' | 'Cluster'>> {
  let mod: typeof import('ioredis');
  try {
    mod = await import('ioredis');
  } catch {
    throw usageError('a Redis store needs the ioredis package: npm install ioredis');
  }
  // Under ESM, ioredis 5.0 has no named exports: the class is the default export, Cluster a static of it.
  const Redis = mod.Redis ?? mod.default;
  return { Redis, Cluster: mod.Cluster ?? Redis.Cluster };
}

/** Redis or Valkey on one server: ioredis speaks to both. */
const standalone: StoreKind = {
  schemes: ['redis:', 'rediss:', 'valkey:', 'valkeys:'],
  example: 'redis://[:password@]host:6379[/db] (valkey:// too; rediss:// for TLS)',
  elsewhere: "--store is not the app's server and database (redis://host:6379/db; database 0 without /db)",
  async open(text) {
    const url = parseUrl(text);
    const { Redis } = await loadIoredis();
    const tls = url.protocol === 'rediss:' || url.protocol === 'valkeys:';
    const client = new Redis(url.href.replace(/^valkey/, 'redis'), {
      lazyConnect: true,
      connectTimeout: CONNECT_TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      ...(tls ? { tls: {} } : {}),
    });
    await connected(client, url.href);
    return { store: new RedisStore({ client }), close: async () => void client.disconnect() };
  },
};

/** Redis Cluster: `redis-cluster://host:7000,host:7001` (any reachable nodes; the rest are discovered). */
const cluster: StoreKind = {
  schemes: ['redis-cluster:', 'valkey-cluster:'],
  example: 'redis-cluster://[:password@]host:7000,host:7001 (valkey-cluster:// too)',
  elsewhere: "--store is not the app's cluster",
  async open(text) {
    const { Cluster } = await loadIoredis();
    // WHATWG URL parsing rejects a comma-separated host list, so the nodes are read from the text.
    const raw = text.slice(text.indexOf('//') + 2);
    const at = raw.lastIndexOf('@');
    const auth = at === -1 ? '' : raw.slice(0, at);
    const hosts = (at === -1 ? raw : raw.slice(at + 1)).replace(/[/?#].*$/, '');
    const nodes = hosts.split(',').map((node) => {
      const [host, port] = node.split(':');
      if (!host || !port || !/^\d+$/.test(port)) throw usageError(`--store: '${node}' is not host:port`);
      return { host, port: Number(port) };
    });
    const password = auth.includes(':') ? decodeURIComponent(auth.slice(auth.indexOf(':') + 1)) : undefined;
    const username = auth.includes(':') ? decodeURIComponent(auth.slice(0, auth.indexOf(':'))) : undefined;
    const client = new Cluster(nodes, {
      lazyConnect: true,
      clusterRetryStrategy: () => null,
      redisOptions: {
        connectTimeout: CONNECT_TIMEOUT_MS,
        maxRetriesPerRequest: 0,
        ...(password ? { password } : {}),
        ...(username ? { username } : {}),
      },
    });
    await connected(client, text);
    return { store: new RedisStore({ client }), close: async () => void client.disconnect() };
  },
};

/** The optional peer dependency, loaded only when a PostgreSQL URL is given. */
async function loadPg(): Promise<Pick<typeof import('pg'), 'Pool'>> {
  let mod: typeof import('pg');
  try {
    mod = await import('pg');
  } catch {
    throw usageError('a PostgreSQL store needs the pg package: npm install pg');
  }
  // pg is CommonJS: under ESM, Pool is a property of the default export.
  return { Pool: mod.Pool ?? mod.default.Pool };
}

/**
 * PostgreSQL: the connection string the app gives pg, and `?table=` when the app's PostgresStore has a
 * `table` of its own. Nothing is created: a database without the table is an error, not a new table.
 */
const postgres: StoreKind = {
  schemes: ['postgres:', 'postgresql:'],
  example: 'postgres://user[:password]@host:5432/db[?table=schema.table] (postgresql:// too)',
  elsewhere: `--store is not the app's database (postgres://user:password@host:5432/db), or ?table= not its PostgresStore's table (default ${DEFAULT_TABLE})`,
  async open(text) {
    const url = parseUrl(text);
    const table = url.searchParams.get('table') ?? DEFAULT_TABLE;
    url.searchParams.delete('table');
    const { Pool } = await loadPg();
    const pool = new Pool({
      connectionString: url.href,
      max: 1,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    const close = () => pool.end();
    let store: PostgresStore;
    try {
      // The table option is checked as the app's would be (a SluiceConfigError names it: exit 2).
      store = new PostgresStore({ client: pool, createTable: false, table });
      const found = await pool.query('SELECT to_regclass($1) IS NOT NULL AS found', [table]);
      if (found.rows[0]?.found !== true) {
        throw new CliError(
          `${redactUrl(text)} has no table ${table}: the app's PostgresStore creates it on its first call (or PostgresStore.schema()); name another with ?table=`,
          ExitCodes.STORE,
        );
      }
    } catch (error) {
      await close().catch(() => {});
      if (error instanceof CliError || error instanceof SluiceConfigError) throw error;
      throw new CliError(`cannot reach ${redactUrl(text)}: ${(error as Error).message}`, ExitCodes.STORE);
    }
    return { store, close };
  },
};

export const STORE_KINDS: readonly StoreKind[] = [standalone, cluster, postgres];

/** Opens the store a `--store` URL names; a URL no kind takes is a usage error. */
export async function openStore(text: string): Promise<OpenedStore> {
  const scheme = /^([a-z][a-z0-9+.-]*:)\/\//i.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined) throw usageError(`--store: '${redactUrl(text)}' is not a URL; ${schemesText()}`);
  const kind = STORE_KINDS.find((k) => k.schemes.includes(scheme));
  if (kind === undefined) throw usageError(`--store: no store for '${scheme}//'; ${schemesText()}`);
  return { ...(await kind.open(text)), elsewhere: kind.elsewhere };
}

function parseUrl(text: string): URL {
  try {
    return new URL(text);
  } catch {
    throw usageError(`--store: '${redactUrl(text)}' is not a URL; ${schemesText()}`);
  }
}

function schemesText(): string {
  return `give one of: ${STORE_KINDS.map((k) => k.example).join('; ')}`;
}

/** What `connected` needs of a client: ioredis's Redis and Cluster alike. */
interface Connectable {
  connect(): Promise<unknown>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Connects, turning a refusal or a timeout into exit 3 with the URL (its password hidden). */
async function connected(client: Connectable, url: string): Promise<void> {
  // The client's own error events would print as "Unhandled error event"; the first one is the cause.
  let cause: Error | undefined;
  client.on('error', (error) => {
    cause ??= error;
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
  });
  try {
    await Promise.race([client.connect(), timeout]);
  } catch (error) {
    const reason = (cause ?? (error as Error)).message;
    throw new CliError(`cannot reach ${redactUrl(url)}: ${reason}`, ExitCodes.STORE);
  } finally {
    clearTimeout(timer);
  }
}

import type { RedisClient } from '@sluice/core';
import { Redis as UpstashRedis } from '@upstash/redis';
import Redis, { Cluster } from 'ioredis';
import Redis6, { Cluster as Cluster6 } from 'ioredis6';
import Valkey, { Cluster as ValkeyCluster } from 'iovalkey';
import * as nodeRedis4 from 'redis4';
import * as nodeRedis5 from 'redis5';
import * as nodeRedis6 from 'redis6';
import { type SpawnedUpstashStandIn, spawnUpstashStandIn } from '../../../../scripts/upstash-rest.cjs';
import { type RedisNode, sharedCluster, sharedRedis } from '../../../../test/support/redis.js';

/**
 * The Redis clients RedisStore accepts, for the Redis suites: every suite that proves a guarantee runs
 * once per client, on the same servers. `closeClients()` ends every client made here.
 */
/** The clients over Redis's own protocol, on a standalone server and on a cluster. */
export type TcpClientName =
  | 'ioredis'
  | 'ioredis v6'
  | 'iovalkey'
  | 'node-redis v4'
  | 'node-redis v5'
  | 'node-redis v6';
/** `@upstash/redis` over HTTP, through scripts/upstash-rest.cjs, on a standalone server only. */
export type ClientName = TcpClientName | '@upstash/redis';
const ALL_TCP_CLIENTS: readonly TcpClientName[] = [
  'ioredis',
  'ioredis v6',
  'iovalkey',
  'node-redis v4',
  'node-redis v5',
  'node-redis v6',
];

/**
 * SLUICE_TEST_CLIENTS (names, comma-separated) narrows the clients to a representative few: CI's runs
 * on Node 22 and 26 (.ci/run) take one client of each protocol adapter, where the whole suite on its
 * other two Nodes takes every one. A name that is no client fails the run rather than test nothing.
 */
function chosenClients(): ReadonlySet<ClientName> | undefined {
  const given = process.env.SLUICE_TEST_CLIENTS;
  if (given === undefined || given === '') return undefined;
  const names = given.split(',').map((n) => n.trim());
  const known: readonly string[] = [...ALL_TCP_CLIENTS, '@upstash/redis'];
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    throw new Error(
      `SLUICE_TEST_CLIENTS: no client ${unknown.join(', ')}; the clients are ${known.join(', ')}`,
    );
  }
  return new Set(names as ClientName[]);
}
const CHOSEN = chosenClients();

export const CLIENT_NAMES: readonly TcpClientName[] = ALL_TCP_CLIENTS.filter((n) => CHOSEN?.has(n) ?? true);

export interface ClientOptions {
  /** ioredis and iovalkey only: node-redis always writes a turn's commands together. */
  autoPipelining?: boolean;
}

/** What a test needs to end a client, whichever library made it. */
interface Closable {
  quit?(): Promise<unknown>;
  disconnect?(): unknown;
  destroy?(): unknown;
}

const made: Closable[] = [];

function keep<T extends Closable>(client: T): T {
  made.push(client);
  return client;
}

/** The ioredis-shaped libraries ('ioredis' is v5, the dev dependency the other suites use too). */
type IoredisName = 'ioredis' | 'ioredis v6' | 'iovalkey';
const ioredisModules: Record<IoredisName, { Redis: typeof Redis; Cluster: typeof Cluster }> = {
  ioredis: { Redis, Cluster },
  'ioredis v6': { Redis: Redis6 as unknown as typeof Redis, Cluster: Cluster6 as unknown as typeof Cluster },
  iovalkey: { Redis: Valkey as unknown as typeof Redis, Cluster: ValkeyCluster as unknown as typeof Cluster },
};
const isIoredis = (name: ClientName): name is IoredisName => name in ioredisModules;

/** What the suites use of a node-redis module, the same in v4, v5 and v6. */
interface NodeRedisClient extends Closable {
  on(event: 'error', listener: () => void): unknown;
  connect(): Promise<unknown>;
}
interface NodeRedisModule {
  createClient(options: { url: string } & Record<string, unknown>): NodeRedisClient;
  createCluster(options: { rootNodes: Array<{ url: string }> }): NodeRedisClient;
}
const nodeRedisModules: Record<string, NodeRedisModule> = {
  'node-redis v4': nodeRedis4 as unknown as NodeRedisModule,
  'node-redis v5': nodeRedis5 as unknown as NodeRedisModule,
  'node-redis v6': nodeRedis6 as unknown as NodeRedisModule,
};

/** An ioredis client on a standalone server (for what a suite does beside the client under test). */
export function standaloneClient(url: string, options: ClientOptions = {}): Redis {
  return keep(new Redis(url, ioOptions(options)));
}

/** An ioredis client on a Redis Cluster. */
export function clusterClient(nodes: RedisNode[], options: ClientOptions = {}): Cluster {
  return keep(new Cluster(nodes, { ...ioOptions(options), redisOptions: { maxRetriesPerRequest: 1 } }));
}

function ioOptions(options: ClientOptions) {
  return { enableAutoPipelining: options.autoPipelining ?? false, maxRetriesPerRequest: 1 };
}

export type Target = { url: string } | { nodes: RedisNode[] };

/** A client of `name` on a standalone server (`url`) or a cluster (`nodes`), connected. */
export async function connectClient(
  name: ClientName,
  target: Target,
  options: ClientOptions = {},
): Promise<RedisClient> {
  if (name === '@upstash/redis') return upstashClient(target);
  if (isIoredis(name)) {
    const { Redis, Cluster } = ioredisModules[name];
    const client =
      'url' in target
        ? keep(new Redis(target.url, ioOptions(options)))
        : keep(
            new Cluster(target.nodes, { ...ioOptions(options), redisOptions: { maxRetriesPerRequest: 1 } }),
          );
    await new Promise<void>((resolve) =>
      (client as { once(event: 'ready', listener: () => void): unknown }).once('ready', () => resolve()),
    );
    return client;
  }
  const module = nodeRedisModules[name]!;
  const client =
    'url' in target
      ? module.createClient({ url: target.url })
      : module.createCluster({
          rootNodes: target.nodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
        });
  client.on('error', () => {});
  await client.connect();
  return keep(client) as unknown as RedisClient;
}

/** One stand-in per redis-server, each in a process of its own, until `closeClients()`. */
const standIns = new Map<string, Promise<SpawnedUpstashStandIn>>();

/** An @upstash/redis client (its defaults: base64 answers, auto-pipelining) on a stand-in in front of `target`. */
async function upstashClient(target: Target): Promise<RedisClient> {
  if (!('url' in target)) throw new Error('@upstash/redis has no cluster client: standalone targets only');
  let standIn = standIns.get(target.url);
  if (standIn === undefined) {
    standIn = spawnUpstashStandIn(target.url);
    standIns.set(target.url, standIn);
  }
  const { url, token, close } = await standIn;
  keep({ quit: close });
  return new UpstashRedis({ url, token, enableTelemetry: false });
}

export type Backend = 'standalone' | 'cluster';

/** A client of `name` on the run's shared standalone server or cluster. */
export function sharedClient(name: ClientName, backend: Backend): Promise<RedisClient> {
  const key = `${name} ${backend}`;
  let client = shared.get(key);
  if (client === undefined) {
    client = sharedTarget(backend).then((target) => connectClient(name, target));
    shared.set(key, client);
  }
  return client;
}
/** One client per name and backend, until `closeClients()`. */
const shared = new Map<string, Promise<RedisClient>>();

/** The run's shared standalone server or cluster. */
export async function sharedTarget(backend: Backend): Promise<Target> {
  return backend === 'standalone' ? { url: await sharedRedis() } : { nodes: await sharedCluster() };
}

/**
 * Every client on both backends, as `test.each` rows: ['ioredis', 'standalone'], ..., and
 * @upstash/redis on the standalone server (Upstash serves no cluster protocol).
 */
export const CLIENTS_AND_BACKENDS: ReadonlyArray<readonly [ClientName, Backend]> = [
  ...CLIENT_NAMES.flatMap((name) => [[name, 'standalone'] as const, [name, 'cluster'] as const]),
  ...((CHOSEN?.has('@upstash/redis') ?? true) ? [['@upstash/redis', 'standalone'] as const] : []),
];

/** Every client on a standalone server: the TCP clients and @upstash/redis. */
export const STANDALONE_CLIENT_NAMES: readonly ClientName[] = CLIENTS_AND_BACKENDS.filter(
  ([, backend]) => backend === 'standalone',
).map(([name]) => name);

/**
 * One client of each protocol adapter (ioredis, node-redis, @upstash/redis), as CLIENTS_AND_BACKENDS
 * rows: for suites that test Sluice above the wire (the deny cache), where the other versions of a
 * client would only repeat the same adapter's calls.
 */
const ONE_PER_ADAPTER: readonly ClientName[] = ['ioredis', 'node-redis v6', '@upstash/redis'];
export const ADAPTERS_AND_BACKENDS = CLIENTS_AND_BACKENDS.filter(([name]) => ONE_PER_ADAPTER.includes(name));

export async function closeClients(): Promise<void> {
  shared.clear();
  standIns.clear();
  const all = made.splice(0);
  await Promise.all(
    all.map(async (client) => {
      try {
        if (client.quit !== undefined) await client.quit();
        else client.destroy?.();
      } catch {
        try {
          // Awaited: node-redis 4's disconnect rejects, not throws, on a client closed already.
          await client.disconnect?.();
        } catch {
          // Closed already.
        }
      }
    }),
  );
}

/** Redis's clock (TIME) in milliseconds, as the scripts read it. */
export async function redisTimeMs(client: Pick<Redis, 'time'>): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** A key prefix no other test or run uses: suites share the servers. */
let counter = 0;
export function uniquePrefix(label: string): string {
  counter++;
  return `t-${label}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

/**
 * How a standalone client is set up: 'fail-fast' as the README and docs/deployment.md recommend (no
 * offline queue, no retry of a command, a bounded connect, quick reconnects), or 'defaults' (the
 * library's own: an offline queue that holds commands while Redis is away).
 */
export type Settings = 'fail-fast' | 'defaults';

/** A client of `name` on the standalone server at `url`, set up as `settings` says, connected. */
export async function configuredClient(
  name: ClientName,
  url: string,
  settings: Settings,
): Promise<RedisClient> {
  // HTTP has no connection to keep or queue on: @upstash/redis is the same client either way.
  if (name === '@upstash/redis') return connectClient(name, { url });
  const reconnect = (attempt: number) => Math.min(attempt * 50, 500);
  if (isIoredis(name)) {
    const options =
      settings === 'defaults'
        ? { lazyConnect: true }
        : {
            lazyConnect: true,
            enableOfflineQueue: false,
            maxRetriesPerRequest: 0,
            connectTimeout: 1000,
            retryStrategy: reconnect,
          };
    const client = new ioredisModules[name].Redis(url, options);
    client.on('error', () => {});
    keep(client);
    await client.connect();
    return client;
  }
  const options =
    settings === 'defaults'
      ? { url }
      : { url, disableOfflineQueue: true, socket: { connectTimeout: 1000, reconnectStrategy: reconnect } };
  const client = nodeRedisModules[name]!.createClient(options);
  client.on('error', () => {});
  keep(client);
  await client.connect();
  return client as unknown as RedisClient;
}

/** A client of `name` on `url` that has not connected yet, and how to connect it. */
export function unconnectedClient(
  name: TcpClientName,
  url: string,
): { client: RedisClient; connect: () => Promise<unknown> } {
  if (isIoredis(name)) {
    const options = { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 };
    const client = keep(new ioredisModules[name].Redis(url, options));
    client.on('error', () => {});
    // The first command of a lazyConnect client starts connecting on its own: then wait for it.
    const connect = async () => {
      if (client.status === 'wait') return client.connect();
      if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
    };
    return { client, connect };
  }
  const client = keep(nodeRedisModules[name]!.createClient({ url }));
  client.on('error', () => {});
  return { client: client as unknown as RedisClient, connect: () => client.connect() };
}

/**
 * Real redis-server processes for the tests: a standalone server and a Redis Cluster, each on free
 * loopback ports with no persistence and a temp dir of its own. No ioredis-mock, ever.
 *
 * This file imports Node built-ins only: the Jest global setup loads it outside the module mapper.
 *
 * Shared servers: the global setup may start one standalone server and one cluster for the whole run
 * and pass them to the workers through the environment (SLUICE_TEST_REDIS_URL,
 * SLUICE_TEST_REDIS_CLUSTER); `REDIS_URL` replaces the standalone one. Without them, `sharedRedis()`
 * and `sharedCluster()` start one per worker process, killed when it exits. Tests that stop, pause
 * or count commands on a server start their own with `startRedis()`.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisNode {
  host: string;
  port: number;
}

export interface RedisProcess extends RedisNode {
  /** redis://127.0.0.1:port */
  url: string;
  /** Stops the server (SIGTERM) and waits for it to exit. */
  stop(): Promise<void>;
  /** Kills the server (SIGKILL), as a crash would, and waits for it to exit. */
  kill(): Promise<void>;
  /** Starts the server again on the same port (after stop or kill; stops it first if running). */
  restart(): Promise<void>;
  /**
   * SIGSTOP: connections stay open and nothing answers until resume(), however long the test's own
   * process is held up (a CLIENT PAUSE of fixed length can end before a starved test has looked).
   */
  pause(): void;
  /** SIGCONT after pause: the server runs what it was sent meanwhile. */
  resume(): void;
}

export interface StartRedisOptions {
  /** Extra redis-server arguments, such as ['--maxmemory', '10mb']. */
  args?: string[];
}

export interface RedisCluster {
  /** The masters first, then the replicas. */
  nodes: RedisNode[];
  servers: RedisProcess[];
  stop(): Promise<void>;
}

export interface StartClusterOptions {
  /** Replicas per master (default 0). */
  replicas?: number;
}

const HOST = '127.0.0.1';
/**
 * The server the Redis suites run on: redis-server, or another with its command line and protocol,
 * named by SLUICE_REDIS_SERVER (CI's second pass sets valkey-server, so every Redis suite proves
 * Valkey too without a copy). Its own CLI (valkey-cli beside valkey-server) creates its clusters.
 */
export const SERVER = process.env.SLUICE_REDIS_SERVER || 'redis-server';
const CLI = SERVER.replace(/-server$/, '-cli');
// Generous: a loaded machine (other test workers, a benchmark) slows a start and a cluster forming.
const START_TIMEOUT_MS = 20_000;
/** Environment names through which the global setup hands shared servers to the workers. */
export const ENV_URL = 'SLUICE_TEST_REDIS_URL';
export const ENV_CLUSTER = 'SLUICE_TEST_REDIS_CLUSTER';

/** Every process started here is killed, and its temp dir removed, when this process exits. */
const running = new Set<ChildProcess>();
const dirs = new Set<string>();
onExit(() => {
  for (const child of running) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs `cleanUp` when this process exits, also by a signal (which ends it without 'exit'). */
export function onExit(cleanUp: () => void): void {
  process.once('exit', cleanUp);
  // Clean up, then let the signal do what it would have done.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      cleanUp();
      process.kill(process.pid, signal);
    });
  }
}

/** Why Redis tests cannot run here, or undefined when they can. */
export function redisMissing(): string | undefined {
  for (const binary of [SERVER, CLI]) {
    const found = spawnSync(binary, ['--version'], { stdio: 'ignore' });
    if (found.error !== undefined || found.status !== 0) {
      return SERVER === 'redis-server'
        ? `${binary} is not installed (sudo apt-get install -y redis-server, or run scripts/test.sh as root)`
        : `${binary} is not installed (SLUICE_REDIS_SERVER=${SERVER}; for Valkey: scripts/install-valkey.sh)`;
    }
  }
  return undefined;
}

let missingChecked: string | undefined | null = null;

export interface DescribeRedisOptions {
  /** The suite uses only `sharedRedis()`, so a REDIS_URL lets it run without redis-server installed. */
  urlOnly?: boolean;
}

/**
 * `describe` for suites that need redis-server. When it is missing the suite skips with a loud
 * warning, except under CI=true, where it fails: CI must never pass by skipping Redis.
 */
export function describeRedis(name: string, body: () => void, options: DescribeRedisOptions = {}): void {
  if (missingChecked === null) missingChecked = redisMissing();
  const missing = options.urlOnly && process.env.REDIS_URL ? undefined : missingChecked;
  // A pass on another server says so in every test name, so that its log cannot pass for Redis's.
  if (SERVER !== 'redis-server') name = `${name} [${SERVER}]`;
  describeNeeding(name, missing, { server: SERVER, suites: 'Redis suites' }, body);
}

/**
 * `describe` for suites that need a server (`missing`: why it cannot run, or undefined): skipped with
 * a loud warning when it is missing, except under CI=true, where the suite fails instead.
 */
export function describeNeeding(
  name: string,
  missing: string | undefined,
  what: { server: string; suites: string },
  body: () => void,
): void {
  if (missing === undefined) {
    describe(name, body);
  } else if (process.env.CI === 'true' || process.env.CI === '1') {
    describe(name, () => {
      test(`${what.server} is available`, () => {
        throw new Error(`${what.suites} cannot be skipped in CI: ${missing}`);
      });
    });
  } else {
    console.warn(`\n*** SKIPPED "${name}": ${missing} ***\n`);
    describe.skip(name, body);
  }
}

/** A port nothing listens on right now (the server may still lose a race for it: callers retry). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Spawns redis-server and resolves once it accepts connections; rejects with its output if it exits. */
function spawnServer(port: number, dir: string, args: readonly string[]): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      SERVER,
      [
        '--port',
        String(port),
        '--bind',
        HOST,
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--daemonize',
        'no',
        ...args,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    running.add(child);
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${SERVER} on port ${port} did not start in time:\n${output}`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        // Keep draining so a chatty server never blocks on a full pipe.
        child.stdout!.resume();
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code, signal) => {
      running.delete(child);
      clearTimeout(timer);
      reject(new Error(`${SERVER} on port ${port} exited (${code ?? signal}):\n${output}`));
    });
    child.once('error', (error) => {
      running.delete(child);
      clearTimeout(timer);
      reject(error);
    });
  });
}

function exited(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/** Starts a redis-server on a free loopback port, with no persistence and a temp dir of its own. */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisProcess> {
  const args = options.args ?? [];
  const dir = mkdtempSync(join(tmpdir(), 'sluice-redis-'));
  dirs.add(dir);
  let child: ChildProcess | undefined;
  let port = 0;
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      child = await spawnServer(port, dir, args);
      break;
    } catch (error) {
      if (attempt >= 4 || !String(error).includes('in use')) throw error;
    }
  }
  const stopWith = async (signal: NodeJS.Signals) => {
    // A paused server would not act on SIGTERM until continued.
    child?.kill('SIGCONT');
    await exited(child, signal);
    child = undefined;
  };
  return {
    host: HOST,
    port,
    url: `redis://${HOST}:${port}`,
    async stop() {
      await stopWith('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
      dirs.delete(dir);
    },
    kill: () => stopWith('SIGKILL'),
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    async restart() {
      await stopWith('SIGTERM');
      mkdirSync(dir, { recursive: true });
      dirs.add(dir);
      // A restarted server may briefly find its port still held by the old socket: retry a little.
      for (let attempt = 0; ; attempt++) {
        try {
          child = await spawnServer(port, dir, args);
          return;
        } catch (error) {
          if (attempt >= 20 || !String(error).includes('in use')) throw error;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    },
  };
}

function redisCli(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(CLI, args, { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${CLI} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

/**
 * Starts a Redis Cluster of three masters (and `replicas` replicas each) with
 * `redis-cli --cluster create`, and resolves once every node reports cluster_state:ok.
 */
export async function startCluster(options: StartClusterOptions = {}): Promise<RedisCluster> {
  const replicas = options.replicas ?? 0;
  const count = 3 * (1 + replicas);
  // A node that misses pings for the node timeout is marked failed. 2 s lets the failover tests promote
  // a replica soon after they kill its master; without replicas, nothing is killed, and Redis's default
  // of 15 s keeps a machine so loaded that a node went unscheduled for 2 s from failing the cluster
  // (CLUSTERDOWN: every call of a run's atomicity and raw-credential tests degraded, at load 10).
  const args = [
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    replicas > 0 ? '2000' : '15000',
  ];
  const started = await Promise.allSettled(Array.from({ length: count }, () => startRedis({ args })));
  const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  try {
    const failed = started.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    await redisCli([
      '--cluster',
      'create',
      ...servers.map((s) => `${s.host}:${s.port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (const server of servers) {
      for (;;) {
        const info = await redisCli(['-h', server.host, '-p', String(server.port), 'cluster', 'info']);
        if (info.includes('cluster_state:ok')) break;
        if (Date.now() > deadline) throw new Error(`cluster node ${server.port} not ok:\n${info}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes: servers.map(({ host, port }) => ({ host, port })), servers, stop };
}

/** "host:port,host:port" <-> nodes: how cluster addresses travel through the environment. */
export function formatNodes(nodes: readonly RedisNode[]): string {
  return nodes.map((n) => `${n.host}:${n.port}`).join(',');
}

export function parseNodes(value: string): RedisNode[] {
  return value.split(',').map((entry) => {
    const at = entry.lastIndexOf(':');
    return { host: entry.slice(0, at), port: Number(entry.slice(at + 1)) };
  });
}

let ownServer: Promise<RedisProcess> | undefined;
let ownCluster: Promise<RedisCluster> | undefined;

/**
 * The standalone server for tests that only read and write keys: REDIS_URL, else the run's shared
 * server, else one started for this worker. Tests must keep to their own keys (a unique prefix).
 */
export async function sharedRedis(): Promise<string> {
  const given = process.env.REDIS_URL ?? process.env[ENV_URL];
  if (given) return given;
  ownServer ??= startRedis();
  return (await ownServer).url;
}

/**
 * A standalone server for one suite: REDIS_URL or the run's shared server, else one of the suite's
 * own that `stop()` ends (call it in afterAll: a per-worker server outlives a worker Jest must kill).
 */
export async function suiteRedis(): Promise<{ url: string; stop(): Promise<void> }> {
  const given = process.env.REDIS_URL ?? process.env[ENV_URL];
  if (given) return { url: given, stop: async () => {} };
  const own = await startRedis();
  return { url: own.url, stop: () => own.stop() };
}

/** The cluster for tests that only read and write keys: the run's shared one, else one for this worker. */
export async function sharedCluster(): Promise<RedisNode[]> {
  const given = process.env[ENV_CLUSTER];
  if (given) return parseNodes(given);
  ownCluster ??= startCluster();
  return (await ownCluster).nodes;
}

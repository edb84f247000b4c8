/**
 * Real PostgreSQL (and pgbouncer) processes for the tests, each on a free loopback port with a temp
 * dir of its own (data, unix socket, logs), started per test file and killed when the process exits.
 * No mocks. Debian's `postgresql` package (scripts/install-postgres.sh): initdb refuses root, so the
 * server runs as the `postgres` user (Node's spawn with its uid and gid, which keeps the real pid, so a
 * test can stop, stall or kill the server itself).
 *
 * This file imports Node built-ins, scripts/postgres-server.cjs (shared with the benchmark) and redis.ts's
 * helpers for any server.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binDir, initCluster, postgresUser, serverArgs, signalAll } from '../../scripts/postgres-server.cjs';
import { describeNeeding, freePort, onExit } from './redis.js';

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 30_000;

const running = new Set<ChildProcess>();

const dirs = new Set<string>();
onExit(() => {
  // The postmaster and its backends, even when stalled.
  for (const child of running) signalAll(child.pid!, 'SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Why Postgres tests cannot run here, or undefined when they can. */
export function postgresMissing(): string | undefined {
  const bin = binDir();
  if (bin === undefined || !existsSync(join(bin, 'initdb'))) {
    return 'PostgreSQL 15+ is not installed (bash scripts/install-postgres.sh)';
  }
  if (spawnSync('id', ['-u', 'postgres']).status !== 0)
    return 'there is no postgres user (install the postgresql package)';
  return undefined;
}

export function pgbouncerMissing(): string | undefined {
  return spawnSync('pgbouncer', ['--version'], { stdio: 'ignore' }).status === 0
    ? undefined
    : 'pgbouncer is not installed (bash scripts/install-postgres.sh)';
}

/**
 * `describe` for suites that need PostgreSQL: skipped with a loud warning when it is missing, except
 * under CI, where the suite fails instead.
 */
export function describePostgres(
  name: string,
  body: () => void,
  needs: Array<() => string | undefined> = [],
): void {
  const missing = [postgresMissing, ...needs].map((check) => check()).find((m) => m !== undefined);
  describeNeeding(name, missing, { server: 'PostgreSQL', suites: 'Postgres suites' }, body);
}

/** A dir owned by the postgres user, removed when its server stops or this process exits. */
function tempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `sluice-${name}-`));
  dirs.add(dir);
  const { uid, gid } = postgresUser();
  chownSync(dir, uid, gid);
  return dir;
}

/** Whether something accepts TCP connections on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: HOST, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Whether PostgreSQL on the port takes queries (a server still starting up accepts connections, refusing them). */
function ready(port: number): boolean {
  return spawnSync(join(binDir()!, 'pg_isready'), ['-q', '-h', HOST, '-p', String(port)]).status === 0;
}

/** Resolves once the server is ready. */
async function listening(
  port: number,
  child: ChildProcess,
  output: () => string,
  isReady: (port: number) => boolean | Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server exited: ${output()}`);
    const ok = await isReady(port);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`server did not start in time: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface ServerProcess {
  host: string;
  port: number;
  /** postgres://postgres@127.0.0.1:port/postgres (trust authentication: no password). */
  url: string;
  /** Stops the server gracefully and waits for it to exit. */
  stop(): Promise<void>;
  /** SIGKILL to the server and every backend, as a crash would, and waits for it to exit. */
  kill(): Promise<void>;
  /** SIGSTOP to every process of the server: connections stay open and nothing answers. */
  pause(): void;
  /** SIGCONT after pause. */
  resume(): void;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** A server process under `spawn` its output kept for error messages. */
function serve(
  command: string,
  args: string[],
  port: number,
  isReady: (port: number) => boolean | Promise<boolean>,
  dir: string,
): () => Promise<ServerProcess> {
  let child: ChildProcess;
  let output = '';
  const launch = async () => {
    output = '';
    child = spawn(command, args, { ...postgresUser(), stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', () => running.delete(child));
    await listening(port, child, () => output, isReady);
  };
  const signal = (name: NodeJS.Signals) => signalAll(child.pid!, name);
  return async () => {
    await launch();
    const server: ServerProcess = {
      host: HOST,
      port,
      url: `postgres://postgres@${HOST}:${port}/postgres`,
      async stop() {
        signal('SIGCONT');
        signal('SIGINT');
        await exited(child);
        // Now, not at exit: a Jest worker that is force-exited never runs its exit hooks, and CI's
        // runs left a data dir of 86 MB behind per server (1,481 of them filled this machine's disk).
        rmSync(dir, { recursive: true, force: true });
        dirs.delete(dir);
      },
      async kill() {
        signal('SIGKILL');
        await exited(child);
      },
      pause: () => signal('SIGSTOP'),
      resume: () => signal('SIGCONT'),
      async restart() {
        await server.kill();
        await launch();
      },
    };
    return server;
  };
}

export interface StartPostgresOptions {
  /** Extra settings, as `-c name=value`. */
  settings?: Record<string, string | number>;
}

/** Starts a fresh PostgreSQL server (initdb, then postgres) on a free loopback port. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<ServerProcess> {
  const bin = binDir()!;
  const dir = tempDir('pg');
  const data = initCluster(bin, dir);
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      return await serve(
        join(bin, 'postgres'),
        serverArgs(data, dir, port, options.settings),
        port,
        ready,
        dir,
      )();
    } catch (error) {
      if (attempt >= 2) throw error;
    }
  }
}

/** Starts pgbouncer in front of `server`, in transaction mode: server connections are shared per transaction. */
export async function startPgBouncer(server: { port: number }, poolSize = 4): Promise<ServerProcess> {
  const dir = tempDir('pgbouncer');
  const port = await freePort();
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      `postgres = host=${HOST} port=${server.port} dbname=postgres user=postgres`,
      '[pgbouncer]',
      `listen_addr = ${HOST}`,
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${poolSize}`,
      'max_client_conn = 500',
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
  const { uid, gid } = postgresUser();
  for (const file of ['pgbouncer.ini', 'users.txt']) chownSync(join(dir, file), uid, gid);
  return serve('pgbouncer', [ini], port, accepts, dir)();
}

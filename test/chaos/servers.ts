import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

/** Starts and stops the chaos suite's app servers (server.mjs), each in a process of its own. */
export type Framework = 'express' | 'fastify';
export type Mode = 'local' | 'allow' | 'deny';

export interface ServerStats {
  requests: number;
  /** The slowest answer, stalls included. */
  maxMs: number;
  /** Answers slower than storeTimeout + 100 ms once the process's starved time is taken out. */
  slow: string[];
  /** Answers that were slower only because the process was not scheduled (a loaded machine). */
  stalled: number;
  unhandled: string[];
}

export interface AppServer {
  readonly label: string;
  /** The Redis client it runs on (clientOf). */
  readonly client: string;
  readonly framework: Framework;
  readonly mode: Mode;
  readonly url: string;
  /** Whether the process is still running (a crash ends it). */
  alive(): boolean;
  /** Everything it wrote to stderr. */
  errors(): string;
  stats(): Promise<ServerStats>;
  stop(): Promise<number | null>;
}

export interface ServerOptions {
  framework: Framework;
  mode: Mode;
  storeTimeoutMs: number;
  limit: number;
  prefix: string;
  /** REDIS_URL, or REDIS_CLUSTER ("host:port,..."). */
  redis: { REDIS_URL: string } | { REDIS_CLUSTER: string };
}

/**
 * The Redis client each server of a chaos suite runs on, by its place among the servers: every client
 * meets the fault (and each the modes of two frameworks over the two suites), at no extra run time.
 */
export const CHAOS_CLIENTS = ['ioredis', 'iovalkey', 'node-redis v4', 'node-redis v5'] as const;
export function clientOf(framework: Framework, mode: Mode, offset: number): string {
  const index =
    (['express', 'fastify'].indexOf(framework) * 3 + ['local', 'allow', 'deny'].indexOf(mode) + offset) % 4;
  return CHAOS_CLIENTS[index]!;
}

const here = __dirname;
// Six servers compile the sources at once: on a loaded machine (load 10 on 2 cores) that took over 20 s.
const START_TIMEOUT_MS = 90_000;

export async function startServer(options: ServerOptions): Promise<AppServer> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', join(here, 'register.mjs'), join(here, 'server.mjs')],
    {
      env: {
        ...process.env,
        ...options.redis,
        FRAMEWORK: options.framework,
        MODE: options.mode,
        STORE_TIMEOUT_MS: String(options.storeTimeoutMs),
        LIMIT: String(options.limit),
        PREFIX: options.prefix,
        CLIENT: clientOf(options.framework, options.mode, 'REDIS_URL' in options.redis ? 0 : 2),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let exit: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      exit = code;
      resolve(code);
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stderr}`)), START_TIMEOUT_MS);
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const ready = /READY (\d+)/.exec(out);
      if (ready) {
        clearTimeout(timer);
        resolve(Number(ready[1]));
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before it was ready:\n${stderr}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    label: `${options.framework}/${options.mode}`,
    client: clientOf(options.framework, options.mode, 'REDIS_URL' in options.redis ? 0 : 2),
    framework: options.framework,
    mode: options.mode,
    url,
    alive: () => exit === undefined,
    errors: () => stderr,
    stats: async () => (await (await fetch(`${url}/__stats`)).json()) as ServerStats,
    stop: () => {
      if (exit === undefined) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Test helpers for the examples: start an app on a free loopback port, and ask it things. */
import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';

export interface Running {
  /** http://127.0.0.1:port */
  url: string;
  close(): Promise<void>;
}

/** An Express app (anything with `listen(port, host)`) on 127.0.0.1, port chosen by the system. */
export async function listenExpress(app: { listen(port: number, host: string): Server }): Promise<Running> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A Fastify instance on 127.0.0.1, port chosen by the system. */
export async function listenFastify(app: {
  listen(options: { port: number; host: string }): Promise<string>;
  close(): Promise<unknown>;
}): Promise<Running> {
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url,
    close: async () => {
      await app.close();
    },
  };
}

/**
 * Starts an app with `start` before each test of the suite and closes it after: the object returned
 * is the running app of the current test.
 */
export function startEach(start: () => Promise<Running>): Running {
  let running: Running | undefined;
  beforeEach(async () => {
    running = await start();
  });
  afterEach(() => running?.close());
  return {
    get url() {
      return running!.url;
    },
    close: () => running!.close(),
  };
}

/** Sets the environment variable `name` to `value()` for the suite (what `node server.js` reads), then restores it. */
export function envForSuite(name: string, value: () => Promise<string>): void {
  const given = process.env[name];
  beforeAll(async () => {
    process.env[name] = await value();
  });
  afterAll(() => {
    if (given === undefined) delete process.env[name];
    else process.env[name] = given;
  });
}

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies of the examples' routes
  body: any;
  /** When the answer arrived, in ms since the epoch. */
  at: number;
}

/** One request; the body parsed as JSON when it is JSON. */
export async function ask(url: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    headers: response.headers,
    body: type.includes('json') ? JSON.parse(text) : text,
    at: Date.now(),
  };
}

/** `times` requests one after another. */
export async function askInTurn(times: number, url: string, init: RequestInit = {}): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < times; i++) answers.push(await ask(url, init));
  return answers;
}

export function statuses(answers: Answer[]): number[] {
  return answers.map((a) => a.status);
}

/** A prefix of its own for each Redis test, so runs on a shared server never meet. */
export function uniquePrefix(example: string): string {
  return `ex-${example}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

/** A loopback port nothing listens on: where an unreachable Redis would be. */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Runs, in a child process from an example's folder, what its server.js does before listening:
 * connect (`connectRedis` or `connectCluster`), or print how to start Redis and exit 1.
 */
export function startUp(
  folder: string,
  connect: 'connectRedis' | 'connectCluster',
  env: Record<string, string>,
): Promise<{ status: number; stdout: string; stderr: string }> {
  const script = `import { ${connect}, exitIfUnreachable } from '@sluice-examples/shared/redis.js';
const client = await ${connect}().catch(exitIfUnreachable);
client.disconnect();`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--input-type=module', '--eval', script],
      { cwd: folder, env: { ...process.env, ...env }, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = (error as { code?: unknown } | null)?.code;
        resolve({ status: typeof code === 'number' ? code : error ? -1 : 0, stdout, stderr });
      },
    );
  });
}

/**
 * `count` distinct API keys no server knows, as a client that mints a fresh key per request would
 * send them (each run its own, so no key is ever seen twice).
 */
export function inventedKeys(count: number): string[] {
  const run = Math.random().toString(36).slice(2, 8);
  return Array.from({ length: count }, (_, i) => `invented-${run}-${i}`);
}

/** The codes of the Sluice warnings (`SluiceWarning`) emitted while `start` runs. */
export async function sluiceWarningsOf(start: () => unknown): Promise<string[]> {
  const codes: string[] = [];
  const spy = jest.spyOn(process, 'emitWarning').mockImplementation(((
    _warning: string,
    options?: { code?: string },
  ) => {
    if (options?.code?.startsWith('ERR_SLUICE_')) codes.push(options.code);
  }) as never);
  try {
    await start();
  } finally {
    spy.mockRestore();
  }
  return codes;
}

/**
 * Apps and clients in a {@link Lab}: an app started in the server namespace on :3000 (on the
 * TypeScript sources, test/support/ts-esm-register.mjs), the proxy of test/fixtures/netns/proxy.mjs
 * on :8080, and clients of test/fixtures/netns/client.mjs sent from the client namespace.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { type Lab, SERVER_APP, SERVER_PROXY, SERVER_PUBLIC, WAITER } from './netns.js';

const ROOT = join(__dirname, '..', '..');
const FIXTURES = join(ROOT, 'test', 'fixtures', 'netns');
/** The app, reached directly. */
export const DIRECT = `http://${SERVER_PUBLIC}:3000`;
/** The app, through the proxy. */
export const PROXIED = `http://${SERVER_PUBLIC}:8080`;

export interface Client {
  url: string;
  method?: string;
  count: number;
  /** The client's own address (one of CLIENTS). */
  from: string;
  /** A new X-Forwarded-For on every request. */
  rotate?: boolean;
}

export interface Sent {
  /** How many requests got each status ('error' for no answer). */
  statuses: Record<string, number>;
  ms: number;
}

/** The requests answered 2xx. */
export function admitted(sent: Sent): number {
  return Object.entries(sent.statuses).reduce((n, [status, k]) => (/^2\d\d$/.test(status) ? n + k : n), 0);
}

/** A running app: what it printed so far, and whether it has exited. */
export interface App {
  readonly child: ChildProcess;
  output(): string;
}

/** Starts `file` in the server namespace, frameworks from `adapter`'s installs; resolves once it answers. */
export async function startApp(
  lab: Lab,
  file: string,
  adapter: string,
  args: readonly string[] = [],
): Promise<App> {
  const register = join(ROOT, 'test/support/ts-esm-register.mjs');
  const child = lab.start(['--import', register, file, ...args], { SLUICE_RESOLVE_FROM: adapter });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d));
  child.stderr?.on('data', (d: Buffer) => (output += d));
  try {
    await send(lab, { url: `${DIRECT}/`, count: 0, from: WAITER, wait: true });
  } catch (error) {
    // Never left holding the port for the next app.
    child.kill('SIGKILL');
    throw new Error(`${file} does not answer (${(error as Error).message}):\n${output}`);
  }
  return { child, output: () => output };
}

/** Starts the proxy: on :8080 for clients, to the app on SERVER_APP:3000 from SERVER_PROXY. */
export function startProxy(lab: Lab): Promise<void> {
  const child = lab.start([join(FIXTURES, 'proxy.mjs'), '8080', SERVER_APP, '3000', SERVER_PROXY]);
  return new Promise((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the proxy exited (${code})`)));
  });
}

/** Sends a client's requests from the client namespace (at most 60 s). */
export async function send(lab: Lab, client: Client & { wait?: boolean }): Promise<Sent> {
  const out = await lab.run(
    [join(FIXTURES, 'client.mjs'), JSON.stringify({ method: 'GET', ...client })],
    60_000,
  );
  return JSON.parse(out) as Sent;
}

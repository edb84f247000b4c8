/**
 * A private network for tests that need clients on addresses other than loopback (Express's
 * 'loopback' trust takes 127.0.0.1 for a proxy): two Linux network namespaces joined by a veth pair.
 *
 *   server namespace: 203.0.113.1 on the veth (what clients reach), 10.77.0.1 and 10.77.0.2 on its
 *                     own loopback (the app's side of a proxy: unique-local addresses)
 *   client namespace: 203.0.113.2 to .4 and .9 on the veth (documentation addresses: public)
 *
 * Nothing is routed anywhere else: the namespaces have no other interface and no default route, so
 * traffic never leaves them. Names carry the pid; `down()` deletes both (killing what runs in them).
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { describeNeeding } from './redis.js';

export const SERVER_PUBLIC = '203.0.113.1';
export const SERVER_APP = '10.77.0.1';
export const SERVER_PROXY = '10.77.0.2';
/** The client namespace's addresses. */
export const CLIENTS = ['203.0.113.2', '203.0.113.3', '203.0.113.4'] as const;
/** The client namespace's address that only asks whether an app is up yet (charged to no test). */
export const WAITER = '203.0.113.9';

export interface Lab {
  readonly server: string;
  readonly client: string;
  /** Starts `node args` in the server namespace (killed by `down()` if still running). */
  start(args: readonly string[], env?: Record<string, string>): ChildProcess;
  /** Runs `node args` in the client namespace and resolves with its standard output. */
  run(args: readonly string[], timeoutMs: number): Promise<string>;
  /** Kills what was started and deletes the namespaces. */
  down(): void;
}

/** Labs made by this process: with the pid, a name no other run or test file uses. */
let made = 0;

function ip(args: readonly string[]): void {
  const done = spawnSync('ip', args, { encoding: 'utf8', timeout: 10_000 });
  if (done.error !== undefined || done.status !== 0) {
    throw new Error(`ip ${args.join(' ')}: ${done.error?.message ?? done.stderr.trim()}`);
  }
}

/** Makes the two namespaces; throws (having removed what it made) when it cannot. */
export function labUp(): Lab {
  const id = `${process.pid}-${++made}`;
  const server = `sluice-srv-${id}`;
  const client = `sluice-cli-${id}`;
  const started = new Set<ChildProcess>();
  let gone = false;
  const down = () => {
    if (gone) return;
    gone = true;
    process.off('exit', down);
    for (const child of started) child.kill('SIGKILL');
    for (const ns of [server, client]) spawnSync('ip', ['netns', 'del', ns], { timeout: 10_000 });
  };
  // A worker that ends before afterAll (killed by Jest, or a crash) still deletes its namespaces.
  process.once('exit', down);
  try {
    ip(['netns', 'add', server]);
    ip(['netns', 'add', client]);
    ip(['-n', server, 'link', 'add', 'veth0', 'type', 'veth', 'peer', 'name', 'veth0', 'netns', client]);
    ip(['-n', server, 'addr', 'add', `${SERVER_PUBLIC}/24`, 'dev', 'veth0']);
    for (const address of [SERVER_APP, SERVER_PROXY])
      ip(['-n', server, 'addr', 'add', `${address}/32`, 'dev', 'lo']);
    for (const address of [...CLIENTS, WAITER])
      ip(['-n', client, 'addr', 'add', `${address}/24`, 'dev', 'veth0']);
    for (const ns of [server, client]) {
      ip(['-n', ns, 'link', 'set', 'lo', 'up']);
      ip(['-n', ns, 'link', 'set', 'veth0', 'up']);
    }
  } catch (error) {
    down();
    throw error;
  }
  return {
    server,
    client,
    start(args, env) {
      const child = spawn('ip', ['netns', 'exec', server, process.execPath, ...args], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      started.add(child);
      child.once('exit', () => started.delete(child));
      return child;
    },
    run(args, timeoutMs) {
      return new Promise((resolve, reject) => {
        execFile(
          'ip',
          ['netns', 'exec', client, process.execPath, ...args],
          { timeout: timeoutMs, encoding: 'utf8' },
          (error, stdout, stderr) =>
            error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
        );
      });
    },
    down,
  };
}

/** Why namespaces cannot be made here, or undefined when they can. */
function netnsMissing(): string | undefined {
  try {
    labUp().down();
    return undefined;
  } catch (error) {
    return `network namespaces cannot be made here (root and iproute2's ip are needed): ${(error as Error).message}`;
  }
}

/**
 * `describe`, when network namespaces can be made; otherwise it fails under CI and is skipped loudly
 * elsewhere, as describeRedis does without redis-server.
 */
export function describeNetns(name: string, body: () => void): void {
  describeNeeding(
    name,
    netnsMissing(),
    { server: 'network namespaces', suites: 'Network namespace suites' },
    body,
  );
}

/**
 * Each example in its own runtime, as a new user would run it: the Workers in workerd (miniflare), the
 * Next.js middleware in Vercel's Edge Runtime, the Deno.serve and Bun.serve servers started by Deno and
 * Bun and reached over HTTP; @sluice/fetch and @sluice/hono each. Bundled first (esbuild, the edge
 * conditions), as their platforms do.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bundleForEdge } from '../../test/runtimes/bundle.js';
import { inOneWindow } from '../../test/support/clock.js';

const root = resolve(__dirname, '../..');
let runtimes: string;
let dir: string;
const load = (name: string) => createRequire(join(runtimes, 'package.json'))(name);
const bundled = async (file: string, globalName?: string) =>
  (
    await bundleForEdge(
      `export * from "./examples/edge/${file}"; import "./examples/edge/${file}";`,
      false,
      globalName,
    )
  ).code;

beforeAll(() => {
  runtimes = execFileSync('bash', [join(root, 'scripts/install-runtimes.sh')], {
    encoding: 'utf8',
    timeout: 600_000,
  }).trim();
  dir = mkdtempSync(join(tmpdir(), 'sluice-edge-examples-'));
}, 600_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

test.each(['worker.js', 'hono-worker.js'])(
  '%s on workerd: 100 a minute per cf-connecting-ip, then 429',
  async (file) => {
    const script = (await bundleForEdge(`export { default } from "./examples/edge/${file}";`)).code;
    const mf = new (load('miniflare').Miniflare)({ modules: true, script, compatibilityDate: '2025-07-01' });
    try {
      const send = (ip: string) =>
        mf.dispatchFetch('http://localhost/hi', { headers: { 'cf-connecting-ip': ip } });
      const { ip, statuses } = await inOneWindow(60_000, async (attempt) => {
        const ip = `203.0.113.${10 + attempt}`;
        const statuses: number[] = [];
        for (let i = 0; i < 101; i++) statuses.push((await send(ip)).status);
        return { ip, statuses };
      });
      expect(statuses.filter((s) => s === 200)).toHaveLength(100);
      const refused = await send(ip);
      expect([refused.status, refused.headers.get('content-type')]).toEqual([
        429,
        'application/problem+json',
      ]);
      const other = await send('203.0.113.8');
      expect([other.status, await other.text()]).toEqual([200, 'hello from /hi']);
    } finally {
      await mf.dispose();
    }
  },
  120_000,
);

test('middleware.js on the Edge Runtime: nothing for an allowed request, the 429 for a refused one', async () => {
  const script = await bundled('middleware.js', 'example');
  const runtime = new (load('edge-runtime').EdgeRuntime)({
    initialCode: `${script}
addEventListener('fetch', (event) => event.respondWith(example.middleware(event.request).then(
  (answer) => answer ?? new Response('route', { headers: { 'x-went-on': '1' } }))));`,
  });
  const send = (ip: string) =>
    runtime.dispatchFetch('http://localhost/api/x', { headers: { 'x-real-ip': ip } });
  // 20 in a window of 10 s (middleware.js).
  const { wentOn, refused } = await inOneWindow(10_000, async (attempt) => {
    const ip = `203.0.113.${10 + attempt}`;
    const wentOn: Array<string | null> = [];
    for (let i = 0; i < 20; i++) wentOn.push((await send(ip)).headers.get('x-went-on'));
    return { wentOn, refused: await send(ip) };
  });
  expect(wentOn).toEqual(Array(20).fill('1'));
  expect([refused.status, refused.headers.get('x-went-on')]).toEqual([429, null]);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
}, 120_000);

function freePort(): Promise<number> {
  return new Promise((resolvePort) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

async function untilUp(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(url, { method: 'HEAD', headers: { 'x-probe': '1' } }).then((r) => r.body?.cancel());
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${url} never answered`);
}

// The Hono ones read the address from c.env, as the README's table says: what Deno.serve and Bun.serve
// pass after the request.
describe.each([
  ['deno.js', 'deno', ['run', '--quiet', '--allow-net', '--allow-env']],
  ['hono-deno.js', 'deno', ['run', '--quiet', '--allow-net', '--allow-env']],
  ['bun.js', 'bun', ['run']],
  ['hono-bun.js', 'bun', ['run']],
])('%s', (file, binary, args) => {
  let child: ChildProcess | undefined;
  // The npm package's `deno` is a Node script that runs the binary as its child: killing the script
  // alone left the server running, an orphan, after every CI run. Its process group goes whole.
  afterEach(async () => {
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise((resolve) => child!.once('close', resolve));
    process.kill(-child.pid, 'SIGKILL');
    await closed;
  });

  test('limits each client address by the connection: 10 a minute, then 429', async () => {
    const path = join(dir, file.replace('.js', '.mjs'));
    writeFileSync(path, await bundled(file));
    const port = await freePort();
    child = spawn(join(runtimes, 'node_modules/.bin', binary), [...args, path], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    const url = `http://127.0.0.1:${port}/`;
    await untilUp(url);
    // The probe above counted once.
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++)
      statuses.push(
        await fetch(url).then(async (r) => {
          await r.text();
          return r.status;
        }),
      );
    expect(statuses).toEqual([...Array(9).fill(200), 429]);
    const refused = await fetch(url);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit')).toMatch(/^"10-per-1m";r=0;t=\d+$/);
    await refused.text();
    // A getIp that found no address would count every client as one, ip:unknown, and say so
    // (ERR_SLUICE_NO_CLIENT_ADDRESS after 3 requests): the count alone would not tell.
    expect(stderr).not.toMatch(/ERR_SLUICE|Error/);
  }, 120_000);
});

/**
 * The same decisions, keys and HTTP exchanges (./probe.ts) on every runtime Sluice claims: workerd
 * through miniflare, with and without nodejs_compat; Vercel's Edge Runtime; Deno; Bun, each compared
 * with Node's answer to the same bundle. The runtimes are npm packages installed on first use by
 * scripts/install-runtimes.sh (never by `pnpm install`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bundleForEdge, nodeBuiltinsIn } from './bundle.js';

const root = resolve(__dirname, '../..');
const PROBE = 'export * from "./test/runtimes/probe.ts"; export { default } from "./test/runtimes/probe.ts";';
const RUNNER = `import { handle } from './probe.mjs';
const response = await handle(new Request('http://localhost/probe'));
console.log(await response.text());`;

let runtimes: string;
let dir: string;
let probe: string;

/** What a runtime printed (Node, Deno, Bun: the same runner). */
function runCli(command: string, args: string[]): unknown {
  const out = execFileSync(command, args, {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

let node: unknown;

beforeAll(async () => {
  runtimes = execFileSync('bash', [join(root, 'scripts/install-runtimes.sh')], {
    encoding: 'utf8',
    timeout: 600_000,
  }).trim();
  dir = mkdtempSync(join(tmpdir(), 'sluice-runtimes-'));
  const bundle = await bundleForEdge(PROBE);
  expect(nodeBuiltinsIn(bundle)).toEqual([]);
  probe = bundle.code;
  writeFileSync(join(dir, 'probe.mjs'), probe);
  writeFileSync(join(dir, 'runner.mjs'), RUNNER);
  node = runCli(process.execPath, ['runner.mjs']);
}, 600_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("Node's answer is the probe's (traces, keys, subjects, exchanges)", () => {
  const { traces, subjects, exchanges } = node as {
    traces: unknown[];
    subjects: unknown[];
    exchanges: unknown[];
  };
  expect(traces).toHaveLength(7 * 8);
  expect(subjects.slice(0, 5)).toEqual([
    'ip:203.0.113.7',
    'ip:2001:db8:1:2::/64',
    'ip:10.1.2.3',
    'ip:2001:db8:0:0::/64',
    'ip:203.0.113.7',
  ]);
  expect((exchanges[2] as unknown[])[0]).toBe(429);
  expect((exchanges[5] as unknown[])[0]).toBe(403);
});

describe.each([
  ['without nodejs_compat', []],
  ['with nodejs_compat', ['nodejs_compat']],
])('workerd (miniflare) %s', (_label, compatibilityFlags) => {
  test('answers as Node does', async () => {
    const { Miniflare } = createRequire(join(runtimes, 'package.json'))('miniflare');
    const mf = new Miniflare({
      modules: true,
      script: probe,
      compatibilityDate: '2025-07-01',
      compatibilityFlags,
    });
    try {
      const response = await mf.dispatchFetch('http://localhost/probe');
      expect(await response.json()).toEqual(node);
    } finally {
      await mf.dispose();
    }
  }, 120_000);
});

test("Vercel's Edge Runtime answers as Node does", async () => {
  const { EdgeRuntime } = createRequire(join(runtimes, 'package.json'))('edge-runtime');
  const script = (await bundleForEdge(PROBE, false, 'probe')).code;
  const runtime = new EdgeRuntime({
    initialCode: `${script}\naddEventListener('fetch', (event) => event.respondWith(probe.handle(event.request)));`,
  });
  const response = await runtime.dispatchFetch('http://localhost/probe');
  expect(JSON.parse(await response.text())).toEqual(node);
}, 120_000);

test('Deno answers as Node does', () => {
  expect(
    runCli(join(runtimes, 'node_modules/.bin/deno'), ['run', '--quiet', '--no-prompt', 'runner.mjs']),
  ).toEqual(node);
}, 120_000);

test('Bun answers as Node does', () => {
  expect(runCli(join(runtimes, 'node_modules/.bin/bun'), ['run', 'runner.mjs'])).toEqual(node);
}, 120_000);

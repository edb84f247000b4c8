#!/usr/bin/env node
/**
 * The packaging check: packs every package as npm would publish it, lints the tarballs (publint,
 * are-the-types-wrong), installs them into throwaway consumer projects at both ends of the declared
 * peer ranges, and there loads them from CommonJS and ESM, runs a request through Express, Fastify,
 * Hono (on @hono/node-server), Koa, NestJS and a plain fetch handler and a decision through Redis, and type-checks a TypeScript consumer: with
 * TypeScript 5.4 and 7 (installed in the consumer, matrix.mjs) under nodenext and bundler, and with the
 * repository's tsc under node10 resolution, which 7 no longer has. Prints PASS/FAIL per check and exits non-zero on any failure.
 *
 *   node test/consumers/run.mjs [--no-build] [--keep | --keep-in=DIR]
 *   node test/consumers/run.mjs --loads-only=DIR
 *
 * --keep-in=DIR does the whole check in DIR and leaves it there; --loads-only=DIR then repeats only the
 * CommonJS and ESM loads of DIR's installed consumers, on whatever Node runs it: what CI does on its other
 * Nodes, since packing, linting the tarballs, installing and type-checking do not depend on the runtime.
 */
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/free-port.mjs';
import { matrix, TYPESCRIPT } from './matrix.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const PACKAGES = ['core', 'express', 'fastify', 'fetch', 'hono', 'koa', 'nestjs'];
const INSTALL_TIMEOUT_MS = 150_000;
const args = new Set(process.argv.slice(2));
/** The value of a `--name=value` argument, or undefined. */
const option = (name) =>
  process.argv
    .slice(2)
    .find((arg) => arg.startsWith(`--${name}=`))
    ?.slice(name.length + 3);
const started = Date.now();
const results = [];

/** Runs a command; resolves to { code, output (stdout and stderr interleaved), stdout }, never rejects. */
function run(command, commandArgs, { cwd = root, env = {}, timeoutMs = 120_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, { cwd, env: { ...process.env, ...env }, stdio: 'pipe' });
    let output = '';
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const timer = setTimeout(() => {
      output += `\n(killed after ${timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: -1, output: `${output}\n${error.message}`, stdout });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, output, stdout });
    });
  });
}

function record(name, ok, detail = '') {
  results.push({ name, ok });
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${name}`);
  if (!ok && detail) console.log(indent(tail(detail, 40)));
}

const tail = (text, lines) => text.trimEnd().split('\n').slice(-lines).join('\n');
const indent = (text) => text.replace(/^/gm, '      ');

/** A step that passes when its command exits 0; its time is part of its name. */
async function step(name, command, commandArgs, options) {
  const started = Date.now();
  const { code, output } = await run(command, commandArgs, options);
  record(`${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`, code === 0, output);
  return code === 0;
}

/** Node entries print `ok - x` / `not ok - x` (reasons on `#` lines) per check: each becomes a line here. */
async function checks(prefix, command, commandArgs, options) {
  const { code, output } = await run(command, commandArgs, options);
  let failed = false;
  let last;
  const flush = () => last && record(`${prefix}: ${last.name}`, last.ok, last.why.join('\n'));
  for (const line of output.split('\n')) {
    const match = /^(not )?ok - (.*)$/.exec(line);
    if (match) {
      flush();
      last = { name: match[2], ok: match[1] === undefined, why: [] };
      failed ||= !last.ok;
    } else if (line.startsWith('#') && last) last.why.push(line.slice(1));
  }
  flush();
  if (code !== 0 && !failed) record(prefix, false, output);
}

/**
 * tsc (the script, run by the node on PATH: CI runs this check on several Nodes) with skipLibCheck off, so errors inside Sluice's declarations count. Errors inside other
 * packages' declarations (old fastify types under a newer TypeScript) are not Sluice's: counted, shown
 * in the name, not failed.
 */
async function typecheck(name, project, tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')) {
  const started = Date.now();
  // Type-checking is what a loaded machine slows most (over 120 s seen at load average 14).
  const { code, output } = await run('node', [tsc, '-p', project], { timeoutMs: 300_000 });
  const seconds = `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const errors = output.split('\n').filter((line) => /\(\d+,\d+\): error TS\d+/.test(line));
  const foreign = errors.filter((line) => /\/node_modules\/(?!@sluice\/)/.test(line));
  const own = errors.length - foreign.length;
  const note = foreign.length > 0 ? `, ${foreign.length} errors in third-party declarations ignored` : '';
  const ok = code === 0 || (errors.length > 0 && own === 0);
  record(
    `${name} (${seconds}${note})`,
    ok,
    output
      .split('\n')
      .filter((line) => !foreign.includes(line))
      .join('\n'),
  );
}

async function startRedis() {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const spawned = await new Promise((resolve) => {
    child.once('error', () => resolve(false));
    child.once('spawn', () => resolve(true));
  });
  if (!spawned) return undefined;
  for (let i = 0; i < 100; i++) {
    const up = await new Promise((resolve) => {
      const socket = new Socket();
      socket.once('connect', () => resolve(socket.destroy() && true));
      socket.once('error', () => resolve(false));
      socket.connect(port, '127.0.0.1');
    });
    if (up) return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill('SIGKILL');
  return undefined;
}

/** Packs one package with pnpm (workspace: ranges become real ones); returns its tarball and manifest. */
async function pack(name, into) {
  const dir = join(root, 'packages', name);
  const { code, output } = await run('pnpm', ['pack', '--pack-destination', into], { cwd: dir });
  const tarball = output
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line.endsWith('.tgz'));
  record(`pack @sluice/${name}`, code === 0 && tarball !== undefined, output);
  if (code !== 0 || tarball === undefined) return undefined;
  const manifest = JSON.parse((await run('tar', ['-xzOf', tarball, 'package/package.json'])).output);
  await shipsWhatUsersRead(name, tarball, manifest);
  return { name, tarball, manifest };
}

/**
 * What a user reads on the registry page and in node_modules: README and LICENSE in the tarball, a
 * license and keywords in the manifest. `repository` and `homepage` are left out on purpose until the
 * repository has a public address (publishing with provenance needs repository.url to be that address).
 */
async function shipsWhatUsersRead(name, tarball, manifest) {
  const files = (await run('tar', ['-tzf', tarball])).output.split('\n');
  const missing = ['package/README.md', 'package/LICENSE'].filter((f) => !files.includes(f));
  if (manifest.license !== 'MIT') missing.push('license: MIT');
  if (!Array.isArray(manifest.keywords) || manifest.keywords.length === 0) missing.push('keywords');
  for (const [bin, path] of Object.entries(manifest.bin ?? {})) {
    if (!files.includes(`package/${path.replace(/^\.\//, '')}`)) missing.push(`bin ${bin}: ${path}`);
  }
  record(
    `@sluice/${name} ships README.md, LICENSE, license and keywords`,
    missing.length === 0,
    `missing: ${missing.join(', ')}`,
  );
}

/** A consumer project in `dir`: the app and TypeScript sources, the tarballs and one end of the peers. */
async function prepare(dir, packed, peers) {
  await mkdir(dir, { recursive: true });
  await cp(join(here, 'app'), join(dir, 'app'), { recursive: true });
  await cp(join(here, 'ts'), join(dir, 'ts'), { recursive: true });
  for (const [folder, type] of [
    ['esm', 'module'],
    ['cjs', 'commonjs'],
  ]) {
    await mkdir(join(dir, 'ts', folder));
    await cp(join(here, 'ts', 'consumer.ts'), join(dir, 'ts', folder, 'consumer.ts'));
    await writeFile(join(dir, 'ts', folder, 'package.json'), JSON.stringify({ type }));
  }
  const dependencies = { ...peers, '@types/node': '^20' };
  for (const p of packed) dependencies[p.manifest.name] = `file:${p.tarball}`;
  // @sluice/express and @sluice/fastify depend on @sluice/core ^x: take it from its tarball, never the registry.
  const manifest = { name: 'sluice-consumer', private: true, dependencies, overrides: {} };
  for (const p of packed) manifest.overrides[p.manifest.name] = `$${p.manifest.name}`;
  await writeFile(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
}

/** The installed consumer in `dir` loads the tarballs from CommonJS and ESM and runs their checks. */
async function loads(end, dir, redisUrl) {
  const env = redisUrl === undefined ? {} : { REDIS_URL: redisUrl };
  await checks(`${end} (Node ${process.version}): CommonJS require`, 'node', ['app/cjs.cjs'], {
    cwd: dir,
    env,
  });
  await checks(`${end} (Node ${process.version}): ESM import`, 'node', ['app/esm.mjs'], { cwd: dir, env });
  await operatorCommand(end, dir, redisUrl);
}

async function consumer(end, dir, peers, redisUrl) {
  const installed = await step(
    `${end}: npm install of the tarballs with ${Object.entries(peers)
      .map(([n, v]) => `${n}@${v}`)
      .join(' ')}`,
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', '--loglevel=error'],
    { cwd: dir, timeoutMs: INSTALL_TIMEOUT_MS },
  );
  if (!installed) return;
  await loads(end, dir, redisUrl);
  // NodeNext and Bundler are the two ends of TypeScript below; the repository's tsc repeated them (node16
  // is nodenext's twin) for 80 s of CI's time (#29), and checks only what they cannot: node10.
  await typecheck(`${end}: TypeScript, moduleResolution node10`, join(dir, 'ts', 'tsconfig.node10.json'));
  for (const { alias } of TYPESCRIPT) {
    const typescript = join(dir, 'node_modules', alias);
    const { version } = JSON.parse(await readFile(join(typescript, 'package.json'), 'utf8'));
    for (const resolution of ['nodenext', 'bundler']) {
      await typecheck(
        `${end}: TypeScript ${version}, moduleResolution ${resolution}`,
        join(dir, 'ts', `tsconfig.${resolution}.json`),
        join(typescript, 'bin', 'tsc'),
      );
    }
  }
}

async function startRedisRecorded() {
  const redis = await startRedis();
  record('redis-server started for the RedisStore checks', redis !== undefined, 'is redis-server installed?');
  return redis;
}

/** --loads-only=DIR: the loads of the consumers a `--keep-in=DIR` run installed, on this Node. */
async function loadsOnly(work) {
  let redis;
  try {
    redis = await startRedisRecorded();
    await Promise.all(['low', 'high'].map((end) => loads(end, join(work, end), redis?.url)));
  } finally {
    redis?.stop();
  }
}

/** The `sluice` bin as npm installs it from core's tarball: it runs, and reads a store through the ioredis installed beside it. */
async function operatorCommand(end, dir, redisUrl) {
  const sluice = join(dir, 'node_modules', '.bin', 'sluice');
  await step(`${end}: npx sluice --help`, sluice, ['--help'], { cwd: dir });
  if (redisUrl === undefined) return;
  const args = [
    'inspect',
    '--ip',
    '203.0.113.7',
    '--store',
    redisUrl,
    '--limit',
    '5',
    '--window',
    '1m',
    '--json',
  ];
  // stdout alone is the JSON: a warning (BAN_NOT_CHECKED, with no ban options here) goes to stderr.
  const { code, output, stdout } = await run(sluice, args, { cwd: dir });
  let allowed;
  try {
    allowed = JSON.parse(stdout).limiters[0].policies[0].remaining === 5;
  } catch {
    allowed = false;
  }
  record(`${end}: sluice inspect on Redis answers (exit ${code})`, code === 0 && allowed, output);
}

async function main() {
  const keepIn = option('keep-in');
  const work = keepIn ?? (await mkdtemp(join(tmpdir(), 'sluice-packaging-')));
  if (keepIn !== undefined) await mkdir(keepIn, { recursive: true });
  console.log(`packaging check in ${work}`);
  let redis;
  try {
    if (!args.has('--no-build')) {
      if (!(await step('pnpm build', 'pnpm', ['build']))) return;
    }
    const tarballs = join(work, 'tarballs');
    await mkdir(tarballs);
    const packed = [];
    for (const name of PACKAGES) {
      const p = await pack(name, tarballs);
      if (p) packed.push(p);
    }
    if (packed.length < PACKAGES.length) return;
    for (const p of packed) {
      await step(`publint ${p.manifest.name}`, bin('publint'), ['run', p.tarball, '--strict']);
      await step(`attw ${p.manifest.name}`, bin('attw'), [
        p.tarball,
        '--no-definitely-typed',
        '--no-color',
        '--format',
        'table-flipped',
      ]);
    }
    let peers;
    try {
      peers = matrix(packed.map((p) => p.manifest));
      record(`peer ranges declared: ${JSON.stringify(peers.ranges)}`, true);
    } catch (error) {
      record('peer ranges', false, error.message);
      return;
    }
    for (const peer of ['express', 'fastify', 'hono', 'koa', '@nestjs/core', 'ioredis']) {
      if (!(peer in peers.ranges)) record(`peer ${peer} declared`, false, `no package declares ${peer}`);
    }
    redis = await startRedisRecorded();
    await Promise.all(
      ['low', 'high'].map((end) =>
        prepare(join(work, end), packed, peers.sets[end]).then(() =>
          consumer(end, join(work, end), peers.sets[end], redis?.url),
        ),
      ),
    );
  } finally {
    redis?.stop();
    if (!args.has('--keep') && keepIn === undefined) await rm(work, { recursive: true, force: true });
    report();
  }
}

function report() {
  const failed = results.filter((r) => !r.ok);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    failed.length === 0 && results.length > 0
      ? `\npackaging: PASS (${results.length} checks, ${seconds} s)`
      : `\npackaging: FAIL (${failed.length} of ${results.length} checks failed, ${seconds} s)`,
  );
  process.exitCode = failed.length === 0 && results.length > 0 ? 0 : 1;
}

const loadsIn = option('loads-only');
if (loadsIn === undefined) await main();
else await loadsOnly(loadsIn).finally(report);

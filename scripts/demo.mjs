#!/usr/bin/env node
/**
 * `pnpm demo`: builds what the demo runs (the JavaScript of @sluice/core, -express and -fastify; not the
 * type declarations, which take most of `pnpm build`'s time and which the demo never reads), saying
 * what it does as it goes, then runs examples/demo. A package whose build is newer than its sources is
 * left as it is.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsup = join(root, 'node_modules', '.bin', 'tsup');
const PACKAGES = ['core', 'express', 'fastify'];

/** The newest modification time of the files under `dir`. */
function newest(dir) {
  return Math.max(
    0,
    ...readdirSync(dir, { withFileTypes: true }).map((e) =>
      e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs,
    ),
  );
}

const started = Date.now();
for (const name of PACKAGES) {
  const dir = join(root, 'packages', name);
  const built = join(dir, 'dist', 'index.js');
  const label = `@sluice/${name}`;
  if (existsSync(built) && statSync(built).mtimeMs >= newest(join(dir, 'src'))) {
    console.log(`demo: ${label} is built and up to date`);
    continue;
  }
  const at = Date.now();
  process.stdout.write(`demo: building ${label} (JavaScript only; pnpm build adds the types)… `);
  // --no-clean: declarations an earlier `pnpm build` wrote stay where they are.
  const run = spawnSync(tsup, ['--no-dts', '--no-clean', '--silent'], { cwd: dir, encoding: 'utf8' });
  if (run.status !== 0) {
    console.log('failed');
    console.error(run.stdout, run.stderr);
    process.exit(1);
  }
  console.log(`${((Date.now() - at) / 1000).toFixed(1)} s`);
}
console.log(`demo: ready in ${((Date.now() - started) / 1000).toFixed(1)} s; starting the demo\n`);
const demo = spawnSync(process.execPath, [join(root, 'examples/demo/demo.mjs')], { stdio: 'inherit' });
process.exit(demo.status ?? 1);

// Module hooks for ts-esm-register.mjs: @sluice/* resolves to the package sources, `.js` import
// suffixes to the .ts files, .ts is compiled by SWC as an ES module (Nest's decorators as
// TypeScript's legacy ones, with their metadata) and .lua and .sql are imported as text. A module outside
// packages/ (a quick start written to a temp dir) finds its frameworks where the adapter named by
// SLUICE_RESOLVE_FROM (`express`) installs them.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { textOf } from '../../scripts/lua-text.cjs';

const { transformSync } = createRequire(import.meta.url)('@swc/core');
const root = new URL('../../', import.meta.url);
const packages = new URL('packages/', root).href;
const adapter = process.env.SLUICE_RESOLVE_FROM;
const resolveFrom = adapter === undefined ? undefined : new URL(`${adapter}/package.json`, packages).href;

export async function resolve(specifier, context, next) {
  const name = /^@sluice\/([a-z]+)$/.exec(specifier)?.[1];
  if (name !== undefined)
    return { url: new URL(`packages/${name}/src/index.ts`, root).href, shortCircuit: true };
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const ts = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
    if (existsSync(ts)) return { url: ts.href, shortCircuit: true };
  }
  const bare = !/^([./]|node:|file:)/.test(specifier);
  if (bare && resolveFrom !== undefined && !context.parentURL?.startsWith(packages)) {
    return next(specifier, { ...context, parentURL: resolveFrom });
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (url.endsWith('.lua') || url.endsWith('.sql')) {
    const text = textOf(url, readFileSync(new URL(url), 'utf8'));
    return { format: 'module', source: `export default ${JSON.stringify(text)};`, shortCircuit: true };
  }
  if (!url.endsWith('.ts')) return next(url, context);
  const filename = fileURLToPath(url);
  const { code } = transformSync(readFileSync(filename, 'utf8'), {
    filename,
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
    },
    module: { type: 'es6' },
  });
  return { format: 'module', source: code, shortCircuit: true };
}

/**
 * Module hooks that let a plain Node process run the TypeScript sources, as Jest does through its
 * config: `@sluice/*` resolve to packages/*\/src, `./x.js` imports inside TypeScript find `./x.ts`,
 * TypeScript is stripped with SWC (the transform Jest uses) and Lua twins load as text. The chaos
 * suite's servers run the code under test, never a stale build.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { transformSync } from '@swc/core';
import { textOf } from '../../scripts/lua-text.cjs';

const root = new URL('../../', import.meta.url);
const ALIASES = {
  '@sluice/core': 'packages/core/src/index.ts',
  '@sluice/core/testing': 'packages/core/src/testing/index.ts',
  '@sluice/express': 'packages/express/src/index.ts',
  '@sluice/fastify': 'packages/fastify/src/index.ts',
};

export async function resolve(specifier, context, nextResolve) {
  const alias = ALIASES[specifier];
  if (alias !== undefined) return { url: new URL(alias, root).href, shortCircuit: true };
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const ts = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (existsSync(ts)) return { url: ts.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (url.endsWith('.ts')) {
    const path = fileURLToPath(url);
    const { code } = transformSync(readFileSync(path, 'utf8'), {
      filename: path,
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'es6' },
      sourceMaps: 'inline',
    });
    return { format: 'module', source: code, shortCircuit: true };
  }
  if (url.endsWith('.lua') || url.endsWith('.sql')) {
    const text = textOf(url, readFileSync(fileURLToPath(url), 'utf8'));
    return { format: 'module', source: `export default ${JSON.stringify(text)};`, shortCircuit: true };
  }
  return nextLoad(url, context);
}

/**
 * Bundles sources as an edge runtime's bundler would (esbuild, platform browser, the package
 * conditions of workerd and Vercel's Edge Runtime): `@sluice/*` resolve to their sources, and
 * `@sluice/core` to its edge entry, so what runs in workerd, Edge Runtime, Deno and Bun is the code
 * under test, built.
 */
import { resolve } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';
import { luaPlugin } from '../../scripts/lua-text.cjs';

const root = resolve(__dirname, '../..');

export const sources = {
  '@sluice/core': `${root}/packages/core/src/edge.ts`,
  '@sluice/fetch': `${root}/packages/fetch/src/index.ts`,
  '@sluice/hono': `${root}/packages/hono/src/index.ts`,
} as const;

export interface Bundle {
  readonly code: string;
  readonly metafile: Metafile;
}

/**
 * One ES module from `contents` (resolved from the repository root), minified or not; or, with
 * `globalName`, a classic script that puts the module's exports on that global (Edge Runtime's form).
 */
export async function bundleForEdge(contents: string, minify = false, globalName?: string): Promise<Bundle> {
  const result = await build({
    stdin: { contents, resolveDir: root, loader: 'ts', sourcefile: 'entry.ts' },
    bundle: true,
    write: false,
    format: globalName === undefined ? 'esm' : 'iife',
    ...(globalName === undefined ? {} : { globalName }),
    platform: 'browser',
    conditions: ['workerd', 'edge-light', 'worker', 'browser'],
    target: 'es2022',
    minify,
    metafile: true,
    alias: sources,
    loader: { '.sql': 'text' },
    plugins: [luaPlugin as Plugin],
    logLevel: 'silent',
    // The root tsconfig maps @sluice/* to Node's entries; `alias` above says which entry an edge gets.
    tsconfigRaw: {},
  });
  return { code: result.outputFiles[0]!.text, metafile: result.metafile };
}

/** The Node built-ins a bundle imports (none may be left: esbuild keeps them as imports). */
export function nodeBuiltinsIn(bundle: Bundle): string[] {
  const found = new Set<string>();
  for (const output of Object.values(bundle.metafile.outputs))
    for (const imported of output.imports) found.add(imported.path);
  return [...found];
}

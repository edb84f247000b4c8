/**
 * The floor of the edge bundle target (issue 31): what Sluice's bundle would weigh with parts taken out,
 * so that a missed ratio says how far out of reach it is. Bundled from the sources (packages/<name>/src,
 * the Lua as shipped, as tsup builds them), as the suite bundles the packages, for two jobs:
 *   - the suite's job (sluice.mjs): @sluice/fetch and RedisStore, two policies;
 *   - a limiter alone (limiter-alone.mjs): createLimiter and RedisStore deciding the same two policies,
 *     no HTTP layer at all;
 * each whole, and with what a limiter of two sliding windows never runs replaced by empty modules: the
 * Lua of the other algorithms (a policy names its algorithm by a string, so a bundler keeps them all)
 * and the migration hints (the options and stores of other libraries, named when given by mistake).
 * Sizes only: a bundle with parts taken out is not run.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ROOT_DIR } from '../common.mjs';

const { luaPlugin } = createRequire(import.meta.url)('../../../scripts/lua-text.cjs');

const JOBS = [
  { job: 'the job: @sluice/fetch, RedisStore, two policies', file: 'sluice.mjs' },
  {
    job: 'a limiter alone: createLimiter, RedisStore, two policies, no HTTP layer',
    file: 'limiter-alone.mjs',
  },
];
/** Replaced by empty modules in the "left out" bundles (paths under packages/core/src). */
const LEFT_OUT = [
  ...['fixed-window', 'sliding-log', 'gcra', 'concurrency'].map((a) => `algorithms/${a}/${a}.lua`),
  'foreign-options.ts',
  'foreign-stores.ts',
  'foreign-upstash.ts',
  'stores/redis/foreign-options.ts',
];
const SOURCES = {
  '@sluice/core': `${ROOT_DIR}/packages/core/src/edge.ts`,
  '@sluice/fetch': `${ROOT_DIR}/packages/fetch/src/index.ts`,
};

/** An esbuild plugin: the packages' sources for their names, and `leftOut` files as modules exporting nothing of use. */
function sourcesPlugin(leftOut) {
  const core = `${ROOT_DIR}/packages/core/src/`;
  return {
    name: 'sluice-sources',
    setup(build) {
      build.onResolve({ filter: /^@sluice\/(core|fetch)$/ }, (args) => ({ path: SOURCES[args.path] }));
      build.onLoad({ filter: /\.(ts|lua)$/ }, async (args) => {
        if (!leftOut || !LEFT_OUT.some((file) => args.path === core + file)) return undefined;
        if (args.path.endsWith('.lua')) return { contents: 'export default "";', loader: 'js' };
        // Its exported names, each undefined: the importers still build.
        const source = await readFile(args.path, 'utf8');
        const names = [...source.matchAll(/^export (?:async )?(?:function|const|let|class) (\w+)/gm)];
        return { contents: names.map(([, n]) => `export const ${n} = undefined;`).join('\n'), loader: 'js' };
      });
    },
  };
}

/** Every job, whole and with LEFT_OUT taken out: sizes from `bundleOf(file, plugins)`. */
export async function floorBundles(bundleOf) {
  const rows = [];
  for (const { job, file } of JOBS) {
    const path = fileURLToPath(new URL(`./${file}`, import.meta.url));
    for (const leftOut of [false, true]) {
      const { minifiedBytes, gzipBytes } = await bundleOf(path, [sourcesPlugin(leftOut), luaPlugin]);
      rows.push({ job, leftOut, minifiedBytes, gzipBytes });
    }
  }
  return { leftOutFiles: LEFT_OUT, rows };
}

import { defineConfig, type Options } from 'tsup';

/**
 * The build every published package shares: ESM and CommonJS from `src/index.ts`, with declarations
 * for both, for Node 20. `extra` adds to it or replaces parts (another `entry`, a `loader`).
 */
export function packageConfig(extra: Options = {}) {
  return defineConfig({
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    target: 'node20',
    tsconfig: 'tsconfig.build.json',
    ...extra,
  });
}

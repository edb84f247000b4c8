import { createRequire } from 'node:module';
import { defineConfig } from 'tsup';

// CommonJS, shared with the test loaders; tsup bundles this file as ESM, which cannot import it directly.
const { luaPlugin } = createRequire(import.meta.url)('../../scripts/lua-text.cjs');

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    // Every runtime but Node (package.json's conditions): no Node built-in on its path.
    edge: 'src/edge.ts',
    'testing/index': 'src/testing/index.ts',
    'otel/index': 'src/otel/index.ts',
    'cli/sluice': 'src/cli/sluice.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  target: 'node20',
  // The Lua twins and the Redis script as shipped (scripts/lua-text.cjs): what the tests run.
  esbuildPlugins: [luaPlugin],
  loader: { '.sql': 'text' },
  tsconfig: 'tsconfig.build.json',
});

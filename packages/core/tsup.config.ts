import { defineConfig } from 'tsup';

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
  loader: { '.lua': 'text', '.sql': 'text' },
  tsconfig: 'tsconfig.build.json',
});

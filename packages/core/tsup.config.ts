import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
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

/** One Jest run for every package; sources are tested directly, no build needed. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/test', '<rootDir>/examples', '<rootDir>/docs'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/test/consumers/'],
  transform: {
    // Decorators as TypeScript's legacy ones, with their metadata: what Nest (@sluice/nestjs) reads.
    '^.+\\.(t|j)sx?$': [
      '@swc/jest',
      {
        jsc: {
          target: 'es2022',
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
        },
      },
    ],
    '^.+\\.(lua|sql)$': '<rootDir>/scripts/jest-text-transform.cjs',
  },
  // cookie 2 (under fastify.inject's light-my-request) is ESM only: compile it like the sources.
  transformIgnorePatterns: ['^(?!.*/\\.pnpm/cookie@2).*/node_modules/'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json', 'lua', 'sql'],
  moduleNameMapper: {
    '^@sluice/core$': '<rootDir>/packages/core/src/index.ts',
    '^@sluice/core/testing$': '<rootDir>/packages/core/src/testing/index.ts',
    '^@sluice/core/otel$': '<rootDir>/packages/core/src/otel/index.ts',
    '^@sluice/express$': '<rootDir>/packages/express/src/index.ts',
    '^@sluice/fastify$': '<rootDir>/packages/fastify/src/index.ts',
    '^@sluice/fetch$': '<rootDir>/packages/fetch/src/index.ts',
    '^@sluice/hono$': '<rootDir>/packages/hono/src/index.ts',
    '^@sluice/koa$': '<rootDir>/packages/koa/src/index.ts',
    '^@sluice/nestjs$': '<rootDir>/packages/nestjs/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  globalSetup: '<rootDir>/test/support/global-setup.cjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.cjs',
  // A SluiceWarning that no test captured fails its test: expected ones are asserted, new ones stand out.
  setupFilesAfterEnv: ['<rootDir>/test/support/warning-guard.ts'],
  // The longest files first, from a committed list: a fresh clone has no timing cache.
  testSequencer: '<rootDir>/test/support/sequencer.cjs',
  testTimeout: 30000,
};

import { MemoryStore } from '@sluice/core';
import { HEADER_CASES_NOW, headerCases } from '../../../test/fixtures/header-cases.js';
import { checkHeaderCase, frameworks } from './support.js';

describe.each(frameworks)('header strings on %s, memory store (the shared table)', (_, makeApp) => {
  test.each(headerCases.map((c) => [c.title, c] as const))('%s', (_title, c) =>
    checkHeaderCase(makeApp, c, new MemoryStore({ clock: () => HEADER_CASES_NOW })),
  );
});

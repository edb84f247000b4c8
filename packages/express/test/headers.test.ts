import { MemoryStore } from '@sluice/core';
import { HEADER_CASES_NOW, headerCases } from '../../../test/fixtures/header-cases.js';
import { checkHeaderCase, expressVersions } from './support.js';

describe.each(expressVersions)('%s: header strings from the shared table', (_, makeApp) => {
  test.each(headerCases.map((c) => [c.title, c] as const))('%s', (_title, c) =>
    checkHeaderCase(makeApp, c, new MemoryStore({ clock: () => HEADER_CASES_NOW })),
  );
});

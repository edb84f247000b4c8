import { MemoryStore } from '@sluice/core';
import { expectHeaderCase, HEADER_CASES_NOW, headerCases } from '../../fixtures/header-cases.js';
import type { Framework } from '../framework.js';
import { get, serving } from '../support.js';

/** The shared table of header strings (test/fixtures/header-cases.ts) on every framework, memory store. */
export function headerStrings(framework: Framework): void {
  const start = serving(framework);

  test.each(headerCases.map((c) => [c.title, c] as const))('%s', async (_title, c) => {
    const app = await start({ ...c.options, store: new MemoryStore({ clock: () => HEADER_CASES_NOW }) });
    let last: Awaited<ReturnType<typeof get>> | undefined;
    for (let i = 0; i < c.requests; i++) last = await get(app, '/ok');
    expectHeaderCase(c, { status: last!.status, headers: last!.headers, body: last!.text });
  });
}

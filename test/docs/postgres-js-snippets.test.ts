import { snippets } from './snippets.js';

/**
 * Every postgres.js client a snippet makes turns off its type query (`fetch_types: false`): postgres.js
 * runs it as each connection opens, and when the server dies then, its rejection is unhandled and ends
 * the process (porsager/postgres #896; docs/deployment.md). A user copies the snippet as it is: on
 * fdd233c, docs/stores.md's did not, and a hostile review's copy of it crashed in 2 of 3 runs.
 */
test('every postgres.js client in the docs is made with fetch_types: false', () => {
  const made = snippets().flatMap(({ where, code }) =>
    [...code.matchAll(/\bpostgres\(([^;]*)\);/g)].map((m) => ({ where, call: m[1]! })),
  );
  expect(made.length).toBeGreaterThan(0);
  expect(made.filter(({ call }) => !/fetch_types:\s*false/.test(call))).toEqual([]);
});

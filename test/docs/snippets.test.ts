import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, snippets, writeProject } from './snippets.js';

/**
 * Docs are tested: every fenced JavaScript or TypeScript block in README.md and docs/ compiles under
 * `tsc --strict` against the packages' sources (JavaScript checked as JavaScript), each as a module of
 * its own. A block found later is covered with no change here.
 */
jest.setTimeout(120_000);

it('every snippet in README.md and docs/ compiles under tsc --strict', () => {
  const all = snippets();
  expect(all.length).toBeGreaterThanOrEqual(20);
  const dir = join(ROOT, 'test', 'docs', '.snippets');
  const names = writeProject(dir, all);
  let output = '';
  for (const project of ['tsconfig.json', 'tsconfig.peers.json']) {
    try {
      const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
      execFileSync(process.execPath, [tsc, '-p', join(dir, project)], { encoding: 'utf8' });
    } catch (error) {
      output += String((error as { stdout?: string }).stdout ?? error);
    }
  }
  // Name each failing snippet by where it stands in the docs.
  const failures = output
    .split('\n')
    .filter((line) => /error TS/.test(line))
    .map((line) => {
      const index = names.findIndex((n) => line.includes(n));
      return index < 0 ? line : `${all[index]!.where}: ${line.slice(line.indexOf('error'))}`;
    });
  expect(failures).toEqual([]);
});

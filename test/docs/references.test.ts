import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ROOT } from './snippets.js';

/**
 * What the docs say exists, exists, and what exists is in the docs: every page they cite, every
 * adapter in the comparison table, ClusterStore where a migration asks for one, `peek()`.
 */
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');

test.each(PAGES)('%s cites only pages of the repository', (page) => {
  const text = read(page);
  const cited = [...text.matchAll(/(?<![\w@/.-])([\w./-]*[\w-]+\.md)\b/g)].map((m) => m[1]!);
  const missing = cited.filter(
    (c) => !existsSync(join(ROOT, dirname(page), c)) && !existsSync(join(ROOT, c)),
  );
  expect(missing).toEqual([]);
});

test("README's comparison table names every framework Sluice has an adapter for", () => {
  const adapters = readdirSync(join(ROOT, 'packages')).filter(
    (p) => p !== 'core' && existsSync(join(ROOT, 'packages', p, 'package.json')),
  );
  const row = read('README.md')
    .split('\n')
    .find((line) => line.startsWith('| Frameworks '))!;
  const sluice = row.split('|')[2]!.toLowerCase();
  expect(adapters.filter((a) => !sluice.includes(a))).toEqual([]);
});

test("docs/migrating.md maps rate-limiter-flexible's RateLimiterCluster to ClusterStore", () => {
  const row = read('docs/migrating.md')
    .split('\n')
    .find((line) => line.startsWith('| `RateLimiterCluster`'))!;
  expect(row).toContain('ClusterStore');
  expect(row).not.toMatch(/not yet/);
});

test('README documents limiter.peek() (API.md r3)', () => {
  expect(read('README.md')).toMatch(/limiter\.peek\('user-42'\)/);
  expect(read('README.md')).toMatch(/`peek\(subject, \{ cost \}\)`/);
});

test('README says once, before the first snippet, that the ES module snippets need "type": "module"', () => {
  const readme = read('README.md');
  expect(readme.split('"type": "module"')).toHaveLength(2);
  expect(readme.indexOf('"type": "module"')).toBeLessThan(readme.indexOf('```js'));
});

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './snippets.js';

/**
 * The README's install route works for someone who has only the README: the packages are not on the
 * registry, so it leads with the tarballs, and what each tarball ships to read (README, LICENSE,
 * keywords) is there to be packed (test/consumers/run.mjs checks the packed tarballs themselves).
 */
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PACKAGES = readdirSync(join(ROOT, 'packages')).filter((p) =>
  existsSync(join(ROOT, 'packages', p, 'package.json')),
);

test("the README's first two commands are the repository's own scripts", () => {
  const first = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<
    string,
    string
  >;
  const run = [...first.matchAll(/\bpnpm (?!install\b)([a-z:]+)/g)].map((m) => m[1]!);
  expect(run).toEqual(['demo', 'test']);
  for (const name of run) expect(scripts[name]).toBeDefined();
});

test('the first npm install the README shows installs packed tarballs, not names the registry lacks', () => {
  const line = readme
    .split('\n')
    .find((l) => l.startsWith('npm install ') && !l.startsWith('npm install -g'))!;
  expect(line).toMatch(
    /^npm install \/tmp\/sluice\/sluice-core-\*\.tgz \/tmp\/sluice\/sluice-express-\*\.tgz express\b/,
  );
  expect(readme).toMatch(/not on the npm registry yet/);
  expect(readme).toContain("pnpm -r --filter './packages/*' pack --pack-destination /tmp/sluice");
});

test.each(PACKAGES)('@sluice/%s has a README, a LICENSE, its license and keywords to ship', (name) => {
  const dir = join(ROOT, 'packages', name);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  expect(readFileSync(join(dir, 'README.md'), 'utf8')).toMatch(new RegExp(`^# @sluice/${name}\\n`));
  expect(readFileSync(join(dir, 'LICENSE'), 'utf8')).toBe(readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
  expect(manifest.license).toBe('MIT');
  expect(manifest.keywords).toEqual(expect.arrayContaining(['rate-limit']));
});

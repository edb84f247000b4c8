import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The README's "Requirements" says what Sluice runs on and what CI runs on each; `engines` and
 * `.ci/run` must say the same. A row added to one and not the other fails here.
 */
const root = join(__dirname, '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const ci = readFileSync(join(root, '.ci', 'run'), 'utf8');
const requirements = readme.slice(
  readme.indexOf('## Requirements'),
  readme.indexOf('\n## ', readme.indexOf('## Requirements') + 1),
);
const PACKAGES = ['core', 'express', 'fastify', 'hono', 'koa', 'nestjs'];

/** The table rows of the Requirements section, as [on, runs]. */
const rows = requirements
  .split('\n')
  .filter((line) => line.startsWith('| ') && !line.startsWith('| On ') && !line.startsWith('| ---'))
  .map(
    (line) =>
      line
        .split('|')
        .slice(1, 3)
        .map((cell) => cell.trim()) as [string, string],
  );

const row = (on: RegExp): string => {
  const found = rows.find(([cell]) => on.test(cell));
  if (found === undefined) throw new Error(`no Requirements row for ${on}`);
  return found[1];
};

test('the Node majors the README names are those of engines, and CI runs each', () => {
  const named = (requirements.match(/^Node ([\d, or]+);/m)?.[1] ?? '').match(/\d+/g) ?? [];
  expect(named).toEqual(['20', '22', '24', '26']);
  for (const name of PACKAGES) {
    const manifest = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8'));
    expect(manifest.engines.node).toBe(named.map((major) => `^${major}.0.0`).join(' || '));
  }
  // Node 20 is the machine's: the README's test command, last; the others through scripts/node.sh.
  expect(ci).toMatch(/step "Node \$\(node -v[^"]*: every test" bash -c 'pnpm test /);
  expect(row(/^Node 20 \(on Redis 7\) and 24 \(on Valkey 8\)$/)).toBe('every test');
  expect(ci).toContain('env SLUICE_REDIS_SERVER=valkey-server scripts/node.sh 24 bash scripts/test.sh\n');
});

test('Node 22 and 26 run what the README says', () => {
  expect(row(/^Node 22 and 26$/)).toBe(
    '`test/adapters`, the Redis parity and atomicity suites (ioredis, node-redis 6, @upstash/redis), the packed packages loaded from CommonJS and ESM',
  );
  expect(ci).toContain('for major in 22 26; do');
  // The clients the row names are those the Redis suites are narrowed to there (clients.ts's names).
  expect(ci).toContain(`env SLUICE_TEST_CLIENTS='ioredis,node-redis v6,@upstash/redis'`);
  expect(ci).toMatch(
    /scripts\/node\.sh "\$major" bash scripts\/test\.sh test\/adapters \\\n\s+packages\/core\/test\/redis\/parity\.test\.ts packages\/core\/test\/redis\/atomicity\.test\.ts/,
  );
  expect(ci).toContain('scripts/node.sh "$major" node test/consumers/run.mjs --loads-only="$consumers"');
});

test('the TypeScript versions of the README are those the packaging check installs', () => {
  expect(row(/^TypeScript/)).toMatch(/^the packed packages' types, `skipLibCheck` off, NodeNext and Bundler/);
  expect(rows.find(([on]) => on.startsWith('TypeScript'))?.[0]).toBe(
    "TypeScript 5.4 and 7 (and the repository's 5.9)",
  );
  // The packaging check's list of compilers (test/consumers/matrix.mjs, an ES module Jest does not load).
  const matrix = readFileSync(join(root, 'test', 'consumers', 'matrix.mjs'), 'utf8');
  const compilers = matrix.slice(
    matrix.indexOf('export const TYPESCRIPT'),
    matrix.indexOf('];', matrix.indexOf('export const TYPESCRIPT')),
  );
  expect([...compilers.matchAll(/spec: '([^']+)'/g)].map((m) => m[1])).toEqual(['~5.4.5', '^7.0.2']);
  expect(requirements).toContain('TypeScript 5.4 or later, or 7');
});

test('Valkey is installed by CI before the tests that run on it', () => {
  expect(row(/^Redis 7\.0 and Valkey 8\.0$/)).toBe(
    'every Redis suite, standalone and cluster, on each client',
  );
  expect(ci.indexOf('scripts/install-valkey.sh')).toBeGreaterThan(-1);
  expect(ci.indexOf('scripts/install-valkey.sh')).toBeLessThan(
    ci.indexOf('SLUICE_REDIS_SERVER=valkey-server'),
  );
});

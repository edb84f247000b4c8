import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './snippets.js';

/**
 * Figures in the docs come from bench/results, never typed by hand: docs/benchmarks.md, its charts and
 * every figure another page quotes (docs/stores.md's ClusterStore cost) are what bench/report.mjs
 * makes of the committed results. And the charts it draws can be read: no label cut off at the edge,
 * no group heading over nothing.
 */
jest.setTimeout(60_000);

const svg = (name: string) => readFileSync(join(ROOT, 'docs/charts', name), 'utf8');

test('docs/benchmarks.md, its charts and the figures docs/stores.md quotes are what bench/results make', () => {
  let output: string;
  try {
    output = execFileSync(process.execPath, [join(ROOT, 'bench/report.mjs'), '--check'], {
      encoding: 'utf8',
    });
  } catch (error) {
    output =
      String((error as { stdout?: string; stderr?: string }).stdout ?? '') +
      String((error as { stderr?: string }).stderr ?? error);
  }
  expect(output.trim()).toBe('the docs quote bench/results as they are');
});

test("docs/stores.md's ClusterStore cost is the cluster run's medians", () => {
  const cluster = JSON.parse(readFileSync(join(ROOT, 'bench/results/cluster.json'), 'utf8')) as {
    rows: { impl: string; primaryUsPerDecision: { median: number } }[];
  };
  const sluice = cluster.rows.find((r) => r.impl === 'sluice')!;
  const stores = readFileSync(join(ROOT, 'docs/stores.md'), 'utf8');
  expect(stores).toContain(`at ${sluice.primaryUsPerDecision.median.toFixed(1)} µs of the primary's CPU`);
  expect(stores).not.toMatch(/55,000|11 µs/);
});

test.each(['bench-core.svg', 'bench-redis.svg', 'bench-http.svg', 'bench-atomicity.svg', 'bench-memory.svg'])(
  '%s: every bar label fits left of its bar, every group heading has bars',
  (name) => {
    const chart = svg(name);
    // Labels end at x (text-anchor: end); at 6 px a character (an 11 px sans-serif's average) none may start left of 0.
    const labels = [...chart.matchAll(/<text x="([\d.]+)" y="[\d.]+" class="label">([^<]*)<\/text>/g)];
    expect(labels.length).toBeGreaterThan(0);
    const cut = labels
      .filter((m) => Number(m[1]) - m[2]!.replace(/&amp;/g, '&').length * 6 < 0)
      .map((m) => m[2]);
    expect(cut).toEqual([]);
    // A group heading is followed by a bar label before the next heading or the end.
    const sequence = [...chart.matchAll(/class="(group|label)"/g)].map((m) => m[1]);
    const empty = sequence.filter((kind, i) => kind === 'group' && sequence[i + 1] !== 'label');
    expect(empty).toEqual([]);
  },
);

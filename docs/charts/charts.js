import { renderChart, renderComparison } from './render.js';
import { simulate } from './simulate.js';

/** The algorithms in the order the docs present them. */
export const ALGORITHMS = [
  'fixed-window',
  'sliding-window',
  'sliding-log',
  'token-bucket',
  'gcra',
  'leaky-bucket',
  'concurrency',
];

/**
 * Every chart as [file name, SVG text], drawn from `core` (@sluice/core, built or sources).
 * @returns {Promise<Array<[string, string]>>}
 */
export async function buildCharts(core) {
  /** @type {Array<[string, Awaited<ReturnType<typeof simulate>>]>} */
  const runs = [];
  for (const algorithm of ALGORITHMS) runs.push([algorithm, await simulate(core, algorithm)]);
  /** @type {Array<[string, string]>} */
  const files = runs.map(([algorithm, results]) => [
    `algorithm-${algorithm}.svg`,
    renderChart(algorithm, results),
  ]);
  files.push(['algorithm-comparison.svg', renderComparison(runs)]);
  return files;
}

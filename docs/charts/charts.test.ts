import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as core from '@sluice/core';
import { buildCharts } from './charts.js';
import { renderChart, summarize } from './render.js';
import { simulate } from './simulate.js';
import { ARRIVALS } from './trace.js';

describe('docs/charts', () => {
  it('the committed SVGs are what the algorithms draw today (pnpm docs:charts regenerates them)', async () => {
    const files = await buildCharts(core);
    expect(files.map(([name]) => name)).toHaveLength(8);
    const stale = files.filter(([name, svg]) => readFileSync(join(__dirname, name), 'utf8') !== svg);
    expect(stale.map(([name]) => name)).toEqual([]);
  });

  it('shows what the docs say each algorithm does with the trace', async () => {
    const peak = async (algorithm: string) => summarize(algorithm, await simulate(core, algorithm)).peak;
    // Fixed windows admit a full window on each side of the boundary at 10 s: twice the limit within 10 s.
    expect(await peak('fixed-window')).toBe(20);
    // The exact log never lets more than the limit through in any 10 s.
    expect(await peak('sliding-log')).toBe(10);
    // The weighted estimate assumes the previous window was even: a burst at its end lets more through.
    expect(await peak('sliding-window')).toBeGreaterThan(10);
    // The leaky bucket lets requests leave one per second, so no 10 s sees more than the limit.
    expect(await peak('leaky-bucket')).toBe(10);
    // Concurrency never has more than 10 in flight.
    expect(await peak('concurrency')).toBe(10);
  });

  it('token-bucket and gcra decide alike; leaky-bucket admits the same requests and delays them', async () => {
    const token = await simulate(core, 'token-bucket');
    const gcra = await simulate(core, 'gcra');
    const leaky = await simulate(core, 'leaky-bucket');
    expect(gcra.map((r) => r.allowed)).toEqual(token.map((r) => r.allowed));
    expect(leaky.map((r) => r.allowed)).toEqual(token.map((r) => r.allowed));
    expect(token.every((r) => r.delayMs === 0)).toBe(true);
    // From an empty bucket the k-th of a burst waits (k - 1) seconds.
    expect(leaky.slice(0, 10).map((r) => r.delayMs)).toEqual(
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((k) => k * 1000 - k * 50),
    );
    expect(renderChart('leaky-bucket', leaky)).toContain('longest wait 9 s');
    expect(leaky).toHaveLength(ARRIVALS.length);
  });
});

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

  it("gives each panel a scale of its own: the denied bars' 15 and the line's 25 sit on separate axes", async () => {
    const svg = renderChart('token-bucket', await simulate(core, 'token-bucket'));
    const numbers = (value: string) =>
      [...svg.matchAll(/<text x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)<\/text>/g)]
        .filter((m) => m[3] === value)
        .map((m) => Number(m[2]));
    // Vertical lines at the plot's left edge: one axis per panel (the time axis's 4 px tick is no axis).
    const axes = [...svg.matchAll(/<line x1="84" y1="([\d.]+)" x2="84" y2="([\d.]+)"/g)]
      .map((m) => [Number(m[1]), Number(m[2])])
      .filter(([top, bottom]) => bottom! - top! > 20);
    expect(axes).toHaveLength(2);
    const [bars, line] = axes.sort((a, b) => a[0]! - b[0]!) as [number[], number[]];
    const lowest15 = Math.max(...numbers('15'));
    const top25 = Math.min(...numbers('25'));
    // Each label beside its own axis (text baselines sit 4 px below the tick), the axes well apart.
    expect(lowest15 - 4).toBeLessThanOrEqual(bars[1]!);
    expect(top25 - 4).toBeGreaterThanOrEqual(line[0]!);
    expect(line[0]! - bars[1]!).toBeGreaterThanOrEqual(40);
  });
});

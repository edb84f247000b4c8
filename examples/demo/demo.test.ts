import { painter, runDemo, tableLines } from './run.js';
import { SCENARIOS } from './scenarios.js';

describe('examples/demo (pnpm demo)', () => {
  it('runs every algorithm on Express and Fastify and prints a table per algorithm', async () => {
    let output = '';
    const summary = await runDemo({
      write: (text: string) => {
        output += text;
      },
      scenarios: SCENARIOS,
    });

    for (const { algorithm } of SCENARIOS) expect(output).toContain(`\n${algorithm}  `);
    expect(output).toContain('RateLimit-Policy: "5-per-1s";q=5;w=1');
    expect(output).toContain('RateLimit-Policy: "2-concurrent";q=2;qu="concurrent-requests"');
    expect(output).not.toContain('\x1b['); // no colours unless asked for
    expect(summary.map((s) => s.algorithm)).toEqual(SCENARIOS.map((s) => s.algorithm));

    const counts = (algorithm: string) => {
      const found = summary.find((s) => s.algorithm === algorithm);
      if (found === undefined) throw new Error(`no summary for ${algorithm}`);
      return [found.express, found.fastify];
    };
    // Seven requests at a limit of 5, then one more after Retry-After, which is honest: it is allowed.
    for (const algorithm of ['fixed-window', 'sliding-window', 'sliding-log']) {
      for (const framework of counts(algorithm)) expect(framework).toMatchObject({ allowed: 6, denied: 2 });
    }
    // Buckets refill while the burst runs (one token per 200 ms): at least the capacity got in.
    for (const algorithm of ['token-bucket', 'gcra']) {
      for (const framework of counts(algorithm)) {
        expect(framework.allowed).toBeGreaterThanOrEqual(6);
        expect(framework.allowed + framework.denied).toBe(8);
      }
    }
    for (const framework of counts('leaky-bucket'))
      expect(framework).toMatchObject({ allowed: 5, denied: 2 });
    for (const framework of counts('concurrency')) expect(framework).toMatchObject({ allowed: 3, denied: 2 });

    // Every row of every table lines up with its header: the '│' separators, and the summary's columns.
    const lines = output.split('\n');
    const bars = (line: string) => [...line].flatMap((ch, i) => (ch === '│' ? [i] : []));
    const headers = lines.filter((l) => l.startsWith('  req '));
    expect(headers).toHaveLength(SCENARIOS.length);
    for (const line of lines.filter((l) => l.includes('│'))) expect(bars(line)).toEqual(bars(headers[0]!));
    // The concurrency rows show r= alone (no t=), not the whole field.
    expect(output).not.toContain('"2-concurrent";r=');
    const summaryHeader = lines.find((l) => l.startsWith('  algorithm '))!;
    const allowedAt = summaryHeader.indexOf('allowed');
    for (const { algorithm } of SCENARIOS) {
      const line = lines.find((l) => l.startsWith(`  ${algorithm} `) && l.includes(' | '))!;
      expect(line.slice(allowedAt - 2, allowedAt)).toBe('  ');
      expect(line.slice(allowedAt)).toMatch(/^\d+ \| \d+ /);
    }
  });

  // A request that took a second or more on a loaded CI machine (a9a9e35) printed `1003 ms`, a character
  // wider than its column, and the row's second '│' moved from 60 to 61.
  it('keeps every column where the header put it, however slow an answer', () => {
    const table = tableLines(painter(false));
    const bars = (line: string) => [...line].flatMap((ch, i) => (ch === '│' ? [i] : []));
    const [, header] = table.header().split('\n');
    for (const tookMs of [0, 999, 1003, 12_345, 99_949, 99_950, 3_600_000]) {
      const answer = { status: 429, policy: '', rateLimit: '"10-per-1m";r=0;t=59', retryAfter: '59', tookMs };
      const row = table.row('after', tookMs, [answer, answer]);
      expect({ tookMs, bars: bars(row) }).toEqual({ tookMs, bars: bars(header!) });
    }
  });
});

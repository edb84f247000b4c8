import { HOLD_MS, HORIZON_MS, LIMIT, TRACE_SUMMARY, WINDOW_MS } from './trace.js';

/** What each chart's title says about the policy it ran. */
const POLICY_NOTES = {
  'fixed-window': 'windows start at 0 s, 10 s, 20 s, 30 s',
  'sliding-window': 'the previous window weighted by how much of it still overlaps',
  'sliding-log': 'every request remembered for 10 s',
  'token-bucket': 'capacity 10, refilled at 1 per second',
  'leaky-bucket': 'capacity 10, one request leaves per second; admitted requests wait for their slot',
  gcra: 'emission interval 1 s, burst 10',
  concurrency: `at most 10 in flight; each request takes ${HOLD_MS / 1000} s`,
};

const COLORS = {
  admitted: '#2e7d32',
  denied: '#c62828',
  arrivals: '#d0d0d0',
  line: '#1565c0',
  grid: '#9e9e9e',
  text: '#212121',
  muted: '#616161',
};
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"';
const BIN_MS = 1_000;
const BINS = HORIZON_MS / BIN_MS;

/** Numbers in the SVG: at most one decimal, so output is byte-for-byte stable. */
function n(value) {
  return String(Math.round(value * 10) / 10);
}

function escapeXml(text) {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function text(x, y, content, attributes = '') {
  return `<text x="${n(x)}" y="${n(y)}" ${FONT} ${attributes}>${escapeXml(content)}</text>`;
}

function rect(x, y, width, height, fill) {
  return `<rect x="${n(x)}" y="${n(y)}" width="${n(width)}" height="${n(height)}" fill="${fill}"/>`;
}

function line(x1, y1, x2, y2, stroke, extra = '') {
  return `<line x1="${n(x1)}" y1="${n(y1)}" x2="${n(x2)}" y2="${n(y2)}" stroke="${stroke}" ${extra}/>`;
}

/** Requests per one-second bin: arrivals, admitted (when they went through) and denied. */
function bins(results) {
  const arrived = new Array(BINS).fill(0);
  const admitted = new Array(BINS).fill(0);
  const denied = new Array(BINS).fill(0);
  for (const r of results) {
    arrived[Math.floor(r.at / BIN_MS)] += 1;
    if (r.allowed) {
      const bin = Math.floor(r.passedAt / BIN_MS);
      if (bin < BINS) admitted[bin] += 1;
    } else denied[Math.floor(r.at / BIN_MS)] += 1;
  }
  return { arrived, admitted, denied };
}

/**
 * The second panel's measure, sampled every 100 ms: for concurrency the requests in flight, for the
 * others the requests that went through in the 10 s up to the sample (what the limit bounds).
 */
function rolling(algorithm, results) {
  const passed = results.filter((r) => r.allowed).map((r) => r.passedAt);
  const span = algorithm === 'concurrency' ? HOLD_MS : WINDOW_MS;
  const samples = [];
  for (let t = 0; t <= HORIZON_MS; t += 100) {
    samples.push([t, passed.filter((p) => p <= t && p > t - span).length]);
  }
  return samples;
}

function measureLabel(algorithm) {
  return algorithm === 'concurrency' ? 'in flight' : 'gone through in the last 10 s';
}

/** Summary figures of one run. */
export function summarize(algorithm, results) {
  const admitted = results.filter((r) => r.allowed);
  return {
    admitted: admitted.length,
    denied: results.length - admitted.length,
    peak: Math.max(...rolling(algorithm, results).map(([, count]) => count)),
    longestDelayMs: Math.max(0, ...admitted.map((r) => r.delayMs)),
  };
}

function summaryLine(algorithm, results) {
  const s = summarize(algorithm, results);
  const parts = [
    `${s.admitted} of ${results.length} admitted, ${s.denied} denied`,
    algorithm === 'concurrency' ? `most in flight: ${s.peak}` : `most gone through in any 10 s: ${s.peak}`,
  ];
  if (s.longestDelayMs > 0) parts.push(`longest wait ${n(s.longestDelayMs / 1000)} s`);
  return parts.join(' · ');
}

/** A vertical axis at `ax` from `top` to `bottom`, with a short tick at each of `ticks`. */
function axis(ax, top, bottom, ticks) {
  return [
    line(ax, top, ax, bottom, COLORS.text, 'stroke-width="1"'),
    ...ticks.map((ty) => line(ax - 4, ty, ax, ty, COLORS.text)),
  ];
}

/** One algorithm's chart: per-second admitted and denied bars over the trace, and the measure the limit bounds. */
export function renderChart(algorithm, results) {
  const width = 820;
  const height = 455;
  const left = 84;
  const plot = 720;
  const x = (ms) => left + (ms / HORIZON_MS) * plot;
  const barScale = 5; // px per request
  const base = 165; // the bars' baseline: admitted above, denied below
  // Well below the denied bars' deepest tick (base + 75): the two panels' scales must not read as one.
  const lineTop = 300;
  const lineBottom = 400;
  const lineMax = 25;
  const y = (count) => lineBottom - (count / lineMax) * (lineBottom - lineTop);
  const label = (ly, content, color, anchor = 'end') =>
    text(left - 8, ly, content, `font-size="11" text-anchor="${anchor}" fill="${color}"`);
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${algorithm}: admitted and denied requests over time">`,
  );
  out.push(rect(0, 0, width, height, '#ffffff'));
  out.push(
    text(
      left,
      24,
      `${algorithm} · limit ${LIMIT} per ${WINDOW_MS / 1000} s`,
      `font-size="16" font-weight="600" fill="${COLORS.text}"`,
    ),
  );
  out.push(text(left, 42, POLICY_NOTES[algorithm], `font-size="12" fill="${COLORS.muted}"`));
  out.push(text(left, 60, summaryLine(algorithm, results), `font-size="12" fill="${COLORS.text}"`));
  const legend = [
    ['arrived', COLORS.arrivals],
    ['admitted', COLORS.admitted],
    ['denied', COLORS.denied],
  ];
  legend.forEach(([name, color], i) => {
    const lx = left + plot - 230 + i * 80;
    out.push(rect(lx, 14, 10, 10, color));
    out.push(text(lx + 14, 23, name, `font-size="11" fill="${COLORS.text}"`));
  });

  // Window boundaries, through both panels.
  for (let t = WINDOW_MS; t < HORIZON_MS; t += WINDOW_MS) {
    out.push(line(x(t), 80, x(t), lineBottom, COLORS.grid, 'stroke-dasharray="2 3" stroke-width="1"'));
  }

  // Panel 1, per second: arrivals (grey) behind admitted (green, up, when they went through) and denied (red, down).
  const { arrived, admitted, denied } = bins(results);
  const step = plot / BINS;
  for (let i = 0; i < BINS; i++) {
    const bx = x(i * BIN_MS) + step * 0.1;
    if (arrived[i] > 0)
      out.push(rect(bx, base - arrived[i] * barScale, step * 0.8, arrived[i] * barScale, COLORS.arrivals));
    if (admitted[i] > 0)
      out.push(rect(bx, base - admitted[i] * barScale, step * 0.8, admitted[i] * barScale, COLORS.admitted));
    if (denied[i] > 0) out.push(rect(bx, base, step * 0.8, denied[i] * barScale, COLORS.denied));
  }
  out.push(line(left, base, left + plot, base, COLORS.text, 'stroke-width="1"'));
  out.push(label(base - 15 * barScale + 4, '15', COLORS.muted));
  out.push(label(base - 36, 'admitted', COLORS.admitted));
  out.push(label(base - 23, 'per second', COLORS.muted));
  out.push(label(base + 4, '0', COLORS.muted));
  out.push(label(base + 27, 'denied', COLORS.denied));
  out.push(label(base + 40, 'per second', COLORS.muted));
  out.push(label(base + 15 * barScale + 4, '15', COLORS.muted));
  // Each panel's own scale: an axis line with ticks, so that no number reads as the other panel's.
  out.push(
    ...axis(
      left,
      base - 15 * barScale,
      base + 15 * barScale,
      [-15, 0, 15].map((c) => base + c * barScale),
    ),
  );

  // Panel 2: the measure the limit bounds, against the limit.
  out.push(line(left, lineBottom, left + plot, lineBottom, COLORS.text, 'stroke-width="1"'));
  out.push(
    line(left, y(LIMIT), left + plot, y(LIMIT), COLORS.denied, 'stroke-dasharray="6 4" stroke-width="1"'),
  );
  out.push(
    text(
      left + plot,
      y(LIMIT) - 4,
      `limit ${LIMIT}`,
      `font-size="11" text-anchor="end" fill="${COLORS.denied}"`,
    ),
  );
  const points = rolling(algorithm, results).map(([t, count]) => `${n(x(t))},${n(y(count))}`);
  out.push(`<polyline fill="none" stroke="${COLORS.line}" stroke-width="2" points="${points.join(' ')}"/>`);
  out.push(label(lineTop + 4, String(lineMax), COLORS.muted));
  out.push(label(lineBottom + 4, '0', COLORS.muted));
  out.push(...axis(left, lineTop, lineBottom, [lineTop, lineBottom]));
  out.push(text(left + 4, lineTop - 6, measureLabel(algorithm), `font-size="11" fill="${COLORS.line}"`));

  // Time axis.
  for (let t = 0; t <= HORIZON_MS; t += 5_000) {
    out.push(line(x(t), lineBottom, x(t), lineBottom + 4, COLORS.text));
    out.push(
      text(
        x(t),
        lineBottom + 17,
        `${t / 1000} s`,
        `font-size="11" text-anchor="middle" fill="${COLORS.muted}"`,
      ),
    );
  }
  out.push(text(left, height - 12, `Trace: ${TRACE_SUMMARY}.`, `font-size="11" fill="${COLORS.muted}"`));
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** Every algorithm on one page: a strip per algorithm, admitted up and denied down, per second. */
export function renderComparison(runs) {
  const width = 800;
  const left = 120;
  const plot = 560;
  const rowHeight = 64;
  const top = 56;
  const height = top + runs.length * rowHeight + 34;
  const x = (ms) => left + (ms / HORIZON_MS) * plot;
  const barScale = 2;
  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="Every algorithm on the same trace">`,
  );
  out.push(rect(0, 0, width, height, '#ffffff'));
  out.push(
    text(
      16,
      24,
      `The same trace, every algorithm, limit ${LIMIT} per ${WINDOW_MS / 1000} s`,
      `font-size="16" font-weight="600" fill="${COLORS.text}"`,
    ),
  );
  out.push(
    text(
      16,
      42,
      `Per second: admitted up (green), denied down (red). Trace: ${TRACE_SUMMARY}.`,
      `font-size="11" fill="${COLORS.muted}"`,
    ),
  );
  for (let t = WINDOW_MS; t < HORIZON_MS; t += WINDOW_MS) {
    out.push(
      line(
        x(t),
        top,
        x(t),
        top + runs.length * rowHeight,
        COLORS.grid,
        'stroke-dasharray="2 3" stroke-width="1"',
      ),
    );
  }
  runs.forEach(([algorithm, results], row) => {
    const base = top + row * rowHeight + rowHeight / 2;
    const { admitted, denied } = bins(results);
    const barWidth = (plot / BINS) * 0.8;
    for (let i = 0; i < BINS; i++) {
      const bx = x(i * BIN_MS) + (plot / BINS) * 0.1;
      if (admitted[i] > 0)
        out.push(rect(bx, base - admitted[i] * barScale, barWidth, admitted[i] * barScale, COLORS.admitted));
      if (denied[i] > 0) out.push(rect(bx, base, barWidth, denied[i] * barScale, COLORS.denied));
    }
    out.push(line(left, base, left + plot, base, COLORS.grid, 'stroke-width="1"'));
    out.push(text(left - 10, base + 4, algorithm, `font-size="12" text-anchor="end" fill="${COLORS.text}"`));
    const s = summarize(algorithm, results);
    const peak = algorithm === 'concurrency' ? `most in flight ${s.peak}` : `most per 10 s: ${s.peak}`;
    out.push(
      text(left + plot + 10, base - 2, `${s.admitted} admitted`, `font-size="11" fill="${COLORS.admitted}"`),
    );
    out.push(text(left + plot + 10, base + 12, peak, `font-size="11" fill="${COLORS.muted}"`));
  });
  const axis = top + runs.length * rowHeight;
  for (let t = 0; t <= HORIZON_MS; t += 5_000) {
    out.push(line(x(t), axis, x(t), axis + 4, COLORS.text));
    out.push(
      text(x(t), axis + 17, `${t / 1000} s`, `font-size="11" text-anchor="middle" fill="${COLORS.muted}"`),
    );
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

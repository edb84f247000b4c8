/**
 * Horizontal bar charts as plain SVG, drawn from measured numbers: one bar per result (the median),
 * a whisker for its min–max over rounds, optional dashed target lines. No chart library.
 */

const LABEL_WIDTH = 330;
const PLOT_WIDTH = 380;
const VALUE_WIDTH = 110;
/**
 * A bar label's width per character at 11 px, on the wide side of common sans-serif fonts (DejaVu
 * Sans averages about 6): the label column grows to the longest label, which is never clipped.
 */
export const LABEL_CHAR_PX = 6.4;
const ROW = 20;
const GROUP_GAP = 26;
const TOP = 70;
const COLORS = { sluice: '#2563eb', peer: '#9ca3af', bare: '#374151' };

function xml(text) {
  return String(text).replace(
    /[&<>"]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c],
  );
}

/**
 * @param chart.groups {Array<{ label: string, bars: Array<{ label: string, value: number, min?: number,
 *   max?: number, kind?: 'sluice' | 'peer' | 'bare' }> }>}
 * @param chart.format {(value: number) => string} the value printed beside each bar
 * @param chart.targets {Array<{ value: number, label: string }>} dashed vertical lines
 */
export function barChart({ title, subtitle = '', groups: given, format, targets = [] }) {
  // A group with nothing measured (a cell no peer has) would be a heading over empty space.
  const groups = given.filter((g) => g.bars.length > 0);
  const longest = Math.max(0, ...groups.flatMap((g) => g.bars.map((b) => String(b.label).length)));
  const plotLeft = Math.max(LABEL_WIDTH, Math.ceil(18 + longest * LABEL_CHAR_PX));
  const plotWidth = PLOT_WIDTH;
  const width = plotLeft + PLOT_WIDTH + VALUE_WIDTH;
  const all = groups.flatMap((g) => g.bars.flatMap((b) => [b.value, b.max ?? b.value]));
  const top = Math.max(...all.filter(Number.isFinite), ...targets.map((t) => t.value), 1e-9) * 1.05;
  const x = (v) => plotLeft + (Math.max(0, v) / top) * plotWidth;
  const parts = [];
  let y = TOP;
  for (const group of groups) {
    parts.push(`<text x="10" y="${y + 14}" class="group">${xml(group.label)}</text>`);
    y += GROUP_GAP - 4;
    for (const bar of group.bars) {
      const color = COLORS[bar.kind ?? 'peer'];
      const mid = y + ROW / 2;
      parts.push(`<text x="${plotLeft - 8}" y="${mid + 4}" class="label">${xml(bar.label)}</text>`);
      if (Number.isFinite(bar.value)) {
        parts.push(
          `<rect x="${plotLeft}" y="${y + 3}" width="${(x(bar.value) - plotLeft).toFixed(1)}" height="${ROW - 6}" fill="${color}"/>`,
        );
        if (Number.isFinite(bar.min) && Number.isFinite(bar.max) && bar.max > bar.min) {
          const [a, b] = [x(bar.min).toFixed(1), x(bar.max).toFixed(1)];
          parts.push(
            `<path d="M${a} ${mid}H${b}M${a} ${mid - 4}V${mid + 4}M${b} ${mid - 4}V${mid + 4}" class="whisker"/>`,
          );
        }
        const at = Math.max(x(bar.value), Number.isFinite(bar.max) ? x(bar.max) : 0) + 6;
        parts.push(
          `<text x="${at.toFixed(1)}" y="${mid + 4}" class="value">${xml(format(bar.value))}</text>`,
        );
      } else {
        parts.push(`<text x="${plotLeft + 6}" y="${mid + 4}" class="value">not measured</text>`);
      }
      y += ROW;
    }
    y += 8;
  }
  targets.forEach((target, i) => {
    const tx = x(target.value).toFixed(1);
    // Labels alternate between two heights so that close targets stay readable.
    parts.push(`<path d="M${tx} ${TOP - 6 - (i % 2) * 11}V${y}" class="target"/>`);
    parts.push(
      `<text x="${tx}" y="${TOP - 10 - (i % 2) * 11}" class="target-label">${xml(target.label)}</text>`,
    );
  });
  const height = y + 24;
  const legend = [
    ['sluice', 'Sluice'],
    ['peer', 'peer library'],
    ['bare', 'no limiter'],
  ]
    .filter(([kind]) => groups.some((g) => g.bars.some((b) => (b.kind ?? 'peer') === kind)))
    .map(
      ([kind, text], i) =>
        `<rect x="${10 + i * 130}" y="${height - 16}" width="10" height="10" fill="${COLORS[kind]}"/><text x="${24 + i * 130}" y="${height - 7}" class="legend">${text}</text>`,
    );
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height + 6}" viewBox="0 0 ${width} ${height + 6}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">
<style>
.title{font-size:16px;font-weight:600;fill:#111827}.subtitle{font-size:11px;fill:#4b5563}
.group{font-size:13px;font-weight:600;fill:#111827}.label{font-size:11px;fill:#1f2937;text-anchor:end}
.value{font-size:11px;fill:#111827}.legend{font-size:11px;fill:#374151}
.whisker{stroke:#111827;stroke-width:1;fill:none}.target{stroke:#dc2626;stroke-width:1;stroke-dasharray:4 3}
.target-label{font-size:10px;fill:#dc2626;text-anchor:middle}
</style>
<rect width="100%" height="100%" fill="#ffffff"/>
<text x="10" y="22" class="title">${xml(title)}</text>
<text x="10" y="38" class="subtitle">${xml(subtitle)}</text>
${parts.join('\n')}
${legend.join('\n')}
</svg>
`;
}

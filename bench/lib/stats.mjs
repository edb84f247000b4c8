/** Summaries of repeated measurements: the median is reported, the min–max spread is the noise. */

export function median(values) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Median, min and max of the rounds, and the spread as a fraction of the median. */
export function summarize(values) {
  const finite = values.filter(Number.isFinite);
  const med = median(finite);
  const min = finite.length > 0 ? Math.min(...finite) : Number.NaN;
  const max = finite.length > 0 ? Math.max(...finite) : Number.NaN;
  return { median: med, min, max, spread: med > 0 ? (max - min) / med : Number.NaN, rounds: values };
}

/** The q-quantile (0..1) of unsorted samples, nearest rank. */
export function quantile(samples, q) {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

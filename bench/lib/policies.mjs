/**
 * The policies every suite measures. "Never reached" limits keep a benchmark on the allowed path
 * (a decision that charges); the denied path is measured separately where it is asked for.
 */

/**
 * Effectively unlimited: at millions of calls a second no one-minute window fills. (Sluice counts
 * exactly only while limit × window stays under 2^50, so hour-long windows take a smaller number.)
 */
export const UNREACHED = 1_000_000_000;
const UNREACHED_PER_HOUR = 100_000_000;

/**
 * The bucket algorithms forget a subject as soon as its bucket is full again, so with a fast refill
 * every call would start from nothing. They are measured in the same steady state as the window
 * counters (the subject's state is still held at its next call): a refill of 1,000 per hour and a
 * capacity no benchmark empties.
 */
const BUCKET = { limit: 1000, window: '1h', burst: UNREACHED_PER_HOUR };

/**
 * One policy per algorithm. The log and the leases keep one entry per call, so they are measured at
 * the sizes they are meant for: sliding-log at 100 per 10 seconds (a hot subject is then mostly
 * denied), concurrency at 100 leases, each released right after it is taken. Each is named as a user
 * would name it: the name is in every Redis key, and the default one would spell out the never-reached
 * limit ("1000000000-per-1m").
 */
export const ALGORITHM_POLICIES = [
  { name: 'per-minute', algorithm: 'sliding-window', limit: UNREACHED, window: '1m' },
  { name: 'per-minute', algorithm: 'fixed-window', limit: UNREACHED, window: '1m' },
  { name: 'per-10s', algorithm: 'sliding-log', limit: 100, window: '10s' },
  { name: 'hourly', algorithm: 'token-bucket', ...BUCKET },
  { name: 'hourly', algorithm: 'leaky-bucket', ...BUCKET },
  { name: 'hourly', algorithm: 'gcra', ...BUCKET },
  { name: 'in-flight', algorithm: 'concurrency', limit: 100, window: '1m' },
];

/** A per-minute window and a token bucket, decided together. */
export const TWO_POLICIES = [
  { name: 'per-minute', algorithm: 'sliding-window', limit: UNREACHED, window: '1m' },
  { name: 'bucket', algorithm: 'token-bucket', ...BUCKET },
];

/** Cases: one label and the limiter options' policies. */
export const LIMITER_CASES = [
  ...ALGORITHM_POLICIES.map((p) => ({ label: p.algorithm, policies: [p] })),
  { label: 'two policies', policies: TWO_POLICIES },
];

/** A concurrency limiter's decision holds a lease: the benchmark gives it back at once. */
export function takesLease(policies) {
  return policies.some((p) => p.algorithm === 'concurrency');
}

/** `n` distinct subjects shaped like client addresses. */
export function subjects(n) {
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
  return out;
}

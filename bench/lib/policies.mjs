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
 * One policy per algorithm. The log and the leases keep one entry per call, so they are measured at
 * the sizes they are meant for: sliding-log at 100 per second (a hot subject is then mostly denied),
 * concurrency at 100 leases, each released right after it is taken.
 */
export const ALGORITHM_POLICIES = [
  { algorithm: 'sliding-window', limit: UNREACHED, window: '1m' },
  { algorithm: 'fixed-window', limit: UNREACHED, window: '1m' },
  { algorithm: 'sliding-log', limit: 100, window: '1s' },
  { algorithm: 'token-bucket', limit: UNREACHED, window: '1m' },
  { algorithm: 'leaky-bucket', limit: UNREACHED, window: '1m' },
  { algorithm: 'gcra', limit: UNREACHED, window: '1m' },
  { algorithm: 'concurrency', limit: 100, window: '1m' },
];

/** A burst policy and an hourly policy, decided together. */
export const TWO_POLICIES = [
  { name: 'burst', algorithm: 'token-bucket', limit: UNREACHED, window: '1s' },
  { name: 'hourly', algorithm: 'sliding-window', limit: UNREACHED_PER_HOUR, window: '1h' },
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

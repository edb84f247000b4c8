import { parseDuration } from '../duration.js';
import type { Policy } from '../options.js';
import { randomTrace, type TraceStep } from './trace.js';

/** Policies a conformance check runs together on one limiter, under a label for its messages. */
export interface PolicySet {
  readonly label: string;
  readonly policies: readonly Policy[];
}

/** Every algorithm alone, with numbers that make windows pass and buckets refill within a trace. */
export const singlePolicySets: readonly PolicySet[] = [
  { label: 'fixed-window', policies: [{ limit: 5, window: 1000, algorithm: 'fixed-window' }] },
  { label: 'sliding-window', policies: [{ limit: 7, window: '900ms', algorithm: 'sliding-window' }] },
  { label: 'sliding-log', policies: [{ limit: 6, window: '700ms', algorithm: 'sliding-log' }] },
  { label: 'token-bucket', policies: [{ limit: 3, window: 1000, algorithm: 'token-bucket', burst: 5 }] },
  { label: 'leaky-bucket', policies: [{ limit: 4, window: 1000, algorithm: 'leaky-bucket', burst: 3 }] },
  { label: 'gcra', policies: [{ limit: 7, window: '600ms', algorithm: 'gcra', burst: 4 }] },
  { label: 'concurrency', policies: [{ limit: 4, window: '800ms', algorithm: 'concurrency' }] },
];

/** Several policies decided together: global scope, leases, and algorithms that disagree often. */
export const multiPolicySets: readonly PolicySet[] = [
  {
    label: 'sliding-window + token-bucket',
    policies: [
      { limit: 8, window: 1000, algorithm: 'sliding-window' },
      { limit: 3, window: '400ms', algorithm: 'token-bucket', burst: 4 },
    ],
  },
  {
    label: 'fixed-window + global sliding-log + concurrency',
    policies: [
      { limit: 6, window: '800ms', algorithm: 'fixed-window' },
      { limit: 10, window: 1000, algorithm: 'sliding-log', scope: 'global' },
      { limit: 3, window: '500ms', algorithm: 'concurrency' },
    ],
  },
  {
    label: 'global gcra + leaky-bucket',
    policies: [
      { limit: 9, window: 1000, algorithm: 'gcra', scope: 'global', burst: 6 },
      { limit: 4, window: '600ms', algorithm: 'leaky-bucket', delay: false },
    ],
  },
  {
    label: 'concurrency + global concurrency + sliding-window',
    policies: [
      { name: 'mine', limit: 2, window: '700ms', algorithm: 'concurrency' },
      { name: 'all', limit: 5, window: '900ms', algorithm: 'concurrency', scope: 'global' },
      { limit: 9, window: 1200, algorithm: 'sliding-window' },
    ],
  },
];

/** Subjects that exercise the key encoding: plain, braces and separators, empty, long (hashed). */
const SUBJECTS = ['a', 'b', 'user:{42}', '', 'x'.repeat(100)];
/** Clock steps up to these fractions of the longest window: bursts inside a window, and windows passing. */
const PACES = [0.1, 0.3, 1, 2.5];

export interface TraceSetOptions {
  /** One trace per seed; default 1 to 8. */
  seeds?: readonly number[];
  /** Steps per trace; default 200. */
  length?: number;
  /** Costs are 1..maxCost; default 4. */
  maxCost?: number;
}

/** Random traces for `policies`, one per seed, each paced by the longest window. */
export function tracesFor(policies: readonly Policy[], options: TraceSetOptions = {}): TraceStep[][] {
  const { seeds = [1, 2, 3, 4, 5, 6, 7, 8], length = 200, maxCost = 4 } = options;
  const longest = Math.max(...policies.map((p) => parseDuration(p.window, 'window')));
  return seeds.map((seed) =>
    randomTrace({
      seed,
      length,
      subjects: SUBJECTS,
      maxCost,
      maxAdvanceMs: Math.ceil(longest * PACES[seed % PACES.length]!),
    }),
  );
}

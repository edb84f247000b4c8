import type { LimiterOptions } from '@sluice/core';
import { randomTrace, type TraceStep } from '@sluice/core/testing';

/** The policy sets and traces of the parity suites: every algorithm alone, and multi-policy limiters. */
export type Policies = NonNullable<LimiterOptions['policies']>;

export const single: Array<[string, Policies]> = [
  ['fixed-window', [{ limit: 5, window: 1000, algorithm: 'fixed-window' }]],
  ['sliding-window', [{ limit: 7, window: 900, algorithm: 'sliding-window' }]],
  ['sliding-log', [{ limit: 6, window: 700, algorithm: 'sliding-log' }]],
  ['token-bucket', [{ limit: 3, window: 1000, algorithm: 'token-bucket', burst: 5 }]],
  ['leaky-bucket', [{ limit: 4, window: 1000, algorithm: 'leaky-bucket', burst: 3 }]],
  ['gcra', [{ limit: 7, window: 600, algorithm: 'gcra', burst: 4 }]],
  ['concurrency', [{ limit: 4, window: 800, algorithm: 'concurrency' }]],
];

export const multi: Array<[string, Policies]> = [
  [
    'sliding-window + token-bucket',
    [
      { limit: 8, window: 1000, algorithm: 'sliding-window' },
      { limit: 3, window: 400, algorithm: 'token-bucket', burst: 4 },
    ],
  ],
  [
    'fixed-window + global sliding-log + concurrency',
    [
      { limit: 6, window: 800, algorithm: 'fixed-window' },
      { limit: 10, window: 1000, algorithm: 'sliding-log', scope: 'global' },
      { limit: 3, window: 500, algorithm: 'concurrency' },
    ],
  ],
  [
    'global gcra + leaky-bucket',
    [
      { limit: 9, window: 1000, algorithm: 'gcra', scope: 'global', burst: 6 },
      { limit: 4, window: 600, algorithm: 'leaky-bucket', delay: false },
    ],
  ],
  [
    'concurrency + global concurrency + sliding-window',
    [
      { name: 'mine', limit: 2, window: 700, algorithm: 'concurrency' },
      { name: 'all', limit: 5, window: 900, algorithm: 'concurrency', scope: 'global' },
      { limit: 9, window: 1200, algorithm: 'sliding-window' },
    ],
  ],
];

export const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];
const LENGTH = 200;
/** Subjects that exercise the key encoding: plain, braces and separators, empty, long. */
const SUBJECTS = ['a', 'b', 'user:{42}', '', 'x'.repeat(100)];
/** Clock steps up to these fractions of the longest window: bursts inside a window, and windows passing. */
const PACES = [0.1, 0.3, 1, 2.5];

/** Random traces for `policies`, one per seed; costs up to `maxCost`. */
export function tracesFor(policies: Policies, maxCost = 4, seeds = SEEDS): TraceStep[][] {
  const longest = Math.max(...policies.map((p) => Number(p.window)));
  return seeds.map((seed) =>
    randomTrace({
      seed,
      length: LENGTH,
      subjects: SUBJECTS,
      maxCost,
      maxAdvanceMs: Math.ceil(longest * PACES[seed % PACES.length]!),
    }),
  );
}

/** The largest capacity among `policies`: a cost one above it can never be allowed. */
export function capacityOf(policies: Policies): number {
  return Math.max(...policies.map((p) => p.burst ?? p.limit));
}

import type { Algorithm, AlgorithmName } from './algorithm.js';
import { concurrency } from './concurrency/concurrency.js';
import { fixedWindow } from './fixed-window/fixed-window.js';
import { gcra } from './gcra/gcra.js';
import { leakyBucket } from './leaky-bucket/leaky-bucket.js';
import { slidingLog } from './sliding-log/sliding-log.js';
import { slidingWindow } from './sliding-window/sliding-window.js';
import { tokenBucket } from './token-bucket/token-bucket.js';

export type {
  Algorithm,
  AlgorithmName,
  Charge,
  NextState,
  PolicyParams,
  RefundResult,
  State,
  StepResult,
} from './algorithm.js';
export { IN_PLACE } from './algorithm.js';

/** Every algorithm by its public name. */
export const algorithms: Readonly<Record<AlgorithmName, Algorithm>> = Object.freeze({
  'fixed-window': fixedWindow,
  'sliding-window': slidingWindow,
  'sliding-log': slidingLog,
  'token-bucket': tokenBucket,
  'leaky-bucket': leakyBucket,
  gcra,
  concurrency,
});

export const algorithmNames = Object.keys(algorithms) as AlgorithmName[];

/** Algorithms whose capacity is `burst` rather than `limit`. */
export const bucketAlgorithms: ReadonlySet<AlgorithmName> = new Set(['token-bucket', 'leaky-bucket', 'gcra']);

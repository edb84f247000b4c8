import type { Algorithm } from '../algorithm.js';
import { gcra } from '../gcra/gcra.js';

/**
 * A leaky bucket as a meter: requests leave one slot T = windowMs / limit apart and the bucket holds
 * `burst`, counting the one leaving now. That is gcra's schedule; the k-th request admitted from empty
 * waits for its slot, `delayMs = (k - 1) * T`, which gcra's step already reports. Whether the adapters
 * hold the request for it is the policy's `delay` option, not a different step.
 */
export const leakyBucket: Algorithm = { ...gcra, name: 'leaky-bucket', code: 'lb' };

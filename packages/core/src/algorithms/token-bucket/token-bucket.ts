import type { Algorithm } from '../algorithm.js';
import { gcra } from '../gcra/gcra.js';

/**
 * A token bucket of capacity `burst`, refilled continuously at limit / windowMs and starting full,
 * admits exactly the calls gcra admits: `tokens = burst - (tat - now) / T`, so `tokens >= cost` is
 * gcra's test. One step (and one Lua twin) serves both; the separate code keeps their keys apart.
 */
export const tokenBucket: Algorithm = { ...gcra, name: 'token-bucket', code: 'tb' };

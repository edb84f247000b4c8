import type { AlgorithmName } from '../../algorithms/algorithm.js';
import concurrency from '../../algorithms/concurrency/concurrency.sql';
import fixedWindow from '../../algorithms/fixed-window/fixed-window.sql';
import gcra from '../../algorithms/gcra/gcra.sql';
import slidingLog from '../../algorithms/sliding-log/sliding-log.sql';
import slidingWindow from '../../algorithms/sliding-window/sliding-window.sql';

/**
 * Each algorithm's SQL twin (its folder's .sql: PL/pgSQL `sluice_v2_<twin>_step` and `_refund`, with the
 * helpers of algorithm.sql), imported by PostgresStore alone rather than held by the algorithm's value
 * as its Lua is: no bundle without PostgresStore (an edge app's) carries them. Token-bucket and
 * leaky-bucket are gcra's, as their steps are.
 */
export const SQL_TWINS: Readonly<Record<AlgorithmName, string>> = {
  'fixed-window': fixedWindow,
  'sliding-window': slidingWindow,
  'sliding-log': slidingLog,
  'token-bucket': gcra,
  'leaky-bucket': gcra,
  gcra,
  concurrency,
};

import {
  multiPolicySets,
  type PolicySet,
  singlePolicySets,
  type TraceSetOptions,
} from '@sluice/core/testing';

/**
 * The parity traces of a store's other clients: they run the script (or SQL) the main client runs and
 * differ only in how arguments and replies cross the wire, which any trace crosses in full. One trace
 * per pace of the clock, of half the kit's length: the suites' time goes to the main client's 8.
 */
export const SECONDARY_TRACES: TraceSetOptions = { seeds: [1, 2, 3, 4], length: 100 };

/**
 * The policy sets a parity suite runs on a client: the main client every set (each algorithm alone,
 * then together); the other clients the multi-policy sets, which hold all seven algorithms between them,
 * so each client still carries every algorithm's arguments and replies, in calls of several policies.
 */
export function paritySets(main: boolean): readonly PolicySet[] {
  return main ? [...singlePolicySets, ...multiPolicySets] : multiPolicySets;
}

/**
 * The clients (`test.each` rows) that take `set`: every client the multi-policy sets, the main one
 * alone the others. Never empty, for `test.each`: the first row stands in for the main client when a
 * narrowed run (SLUICE_TEST_CLIENTS) left it out.
 */
export function clientsTaking<Row>(
  set: PolicySet,
  rows: readonly Row[],
  isMain: (row: Row) => boolean,
): Row[] {
  const main = rows.some(isMain) ? isMain : (row: Row) => row === rows[0];
  return rows.filter((row) => paritySets(main(row)).includes(set));
}

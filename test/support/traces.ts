import type { TraceSetOptions } from '@sluice/core/testing';

/**
 * The parity traces of a store's other clients: they run the script (or SQL) the main client runs and
 * differ only in how arguments and replies cross the wire, which any trace crosses in full. One trace
 * per pace of the clock, of half the kit's length: the suites' time goes to the main client's 8.
 */
export const SECONDARY_TRACES: TraceSetOptions = { seeds: [1, 2, 3, 4], length: 100 };

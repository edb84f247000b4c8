import { MemoryStore, type Store } from '@sluice/core';
import fc from 'fast-check';
import { NUM_RUNS } from '../../packages/core/test/arbitraries.js';
import { ALGORITHMS, neverOverTheLimit, onePolicy, severalPolicies } from './traces.js';

const memory = (clock: () => number) => ({ store: new MemoryStore({ clock }) });

/** A broken store that forgets every call: the property must catch it, or it proves nothing. */
const forgetful = (clock: () => number) => {
  const store: Store = {
    local: true,
    consume: (call) => new MemoryStore({ clock }).consume(call),
    refund: () => undefined,
    reset: () => undefined,
  };
  return { store };
};

describe('random traces on the memory store never go over the limit', () => {
  it.each(ALGORITHMS)('%s', async (algorithm) => {
    await fc.assert(neverOverTheLimit(onePolicy(algorithm), memory), { numRuns: NUM_RUNS });
  });

  it('several policies decided together', async () => {
    await fc.assert(neverOverTheLimit(severalPolicies, memory), { numRuns: NUM_RUNS * 2 });
  });

  it.each(ALGORITHMS)('the check catches a store that forgets (%s)', async (algorithm) => {
    const run = await fc.check(neverOverTheLimit(onePolicy(algorithm), forgetful), { numRuns: NUM_RUNS * 4 });
    expect(run.failed).toBe(true);
  });
});

import { MemoryStore, type Store } from '@sluice/core';
import { NUM_RUNS } from '../../packages/core/test/arbitraries.js';
import fc from '../support/fast-check.js';
import { allowWarnings } from '../support/warnings.js';
import { ALGORITHMS, neverOverTheLimit, onePolicy, severalPolicies } from './traces.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');

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

/**
 * A broken store whose refunds give back the whole charge as if it were made now, however long ago it
 * was (Sluice's own bug before 0.2: a refund after a refill lifted a bucket above its capacity).
 */
const overRefunding = (clock: () => number) => {
  const inner = new MemoryStore({ clock });
  const store: Store = {
    local: true,
    consume: (call) => inner.consume(call),
    refund: (call) => inner.refund({ ...call, charge: { ...call.charge, chargedAt: clock() } }),
    reset: (limiter, subject) => inner.reset(limiter, subject),
  };
  return { store };
};

describe('random traces on the memory store never go over the limit', () => {
  it.each(ALGORITHMS)('%s', async (algorithm) => {
    await fc.assert(neverOverTheLimit(onePolicy(algorithm), memory), { numRuns: NUM_RUNS });
  });

  it.each(ALGORITHMS)('%s, with refunds as common as calls', async (algorithm) => {
    await fc.assert(neverOverTheLimit(onePolicy(algorithm), memory, 'many'), { numRuns: NUM_RUNS * 2 });
  });

  it.each(ALGORITHMS.filter((a) => a !== 'concurrency'))(
    'the check catches a store whose refunds give back more than is still charged (%s)',
    async (algorithm) => {
      const property = neverOverTheLimit(onePolicy(algorithm), overRefunding, 'many');
      const run = await fc.check(property, { numRuns: NUM_RUNS * 8 });
      expect(run.failed).toBe(true);
    },
  );

  it('several policies decided together', async () => {
    await fc.assert(neverOverTheLimit(severalPolicies, memory), { numRuns: NUM_RUNS * 2 });
  });

  it.each(ALGORITHMS)('the check catches a store that forgets (%s)', async (algorithm) => {
    const run = await fc.check(neverOverTheLimit(onePolicy(algorithm), forgetful), { numRuns: NUM_RUNS * 4 });
    expect(run.failed).toBe(true);
  });
});

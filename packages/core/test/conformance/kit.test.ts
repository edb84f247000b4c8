import { MemoryStore, type Store, type StoreCall, type StoreOutcome } from '@sluice/core';
import { checkStoreAtomicity, checkStoreParity, singlePolicySets } from '@sluice/core/testing';
import { allowWarnings } from '../../../../test/support/warnings.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');

/**
 * The conformance kit of @sluice/core/testing, run as a custom store's author would: MemoryStore
 * passes it in process and behind promises (as a remote store), and stores that break a guarantee are
 * caught, each with a message naming the difference.
 */

/** MemoryStore behind promises, `local: false`: a limiter runs it through its failure policy, as any remote store. */
function remote(clock: () => number): Store {
  const memory = new MemoryStore({ clock });
  return {
    local: false,
    consume: async (call) => memory.consume(call),
    refund: async (call) => memory.refund(call),
    reset: async (limiter, subject) => memory.reset(limiter, subject),
  };
}

/** A store that checks, lets other calls run, then charges: a read-then-write race. */
function checkThenCharge(clock: () => number): Store {
  const memory = new MemoryStore({ clock });
  return {
    local: false,
    consume: async (call: StoreCall): Promise<StoreOutcome> => {
      const seen = memory.consume({ ...call, mode: 'peek' });
      await new Promise((resolve) => setImmediate(resolve));
      if (call.mode === 'consume' && seen.steps.every((s) => s.allowed)) memory.consume(call);
      return seen;
    },
    refund: (call) => memory.refund(call),
    reset: (limiter, subject) => memory.reset(limiter, subject),
  };
}

/** A store that decides each policy on its own: a call denied by one policy is still charged by the others. */
function policyByPolicy(clock: () => number): Store {
  const memory = new MemoryStore({ clock });
  return {
    local: true,
    consume: (call) => {
      const parts = call.limiter.policies.map((policy) =>
        memory.consume({ ...call, limiter: { ...call.limiter, policies: [policy] } }),
      );
      return { now: clock(), steps: parts.map((p) => p.steps[0]!) };
    },
    refund: (call) => memory.refund(call),
    reset: (limiter, subject) => memory.reset(limiter, subject),
  };
}

describe('checkStoreParity', () => {
  it('passes MemoryStore over every algorithm and the multi-policy sets', async () => {
    const report = await checkStoreParity((clock) => new MemoryStore({ clock }));
    expect(report).toMatchObject({ policySets: 11, traces: 88 });
    // The traces deny, refund and release: a check where everything is allowed would prove little.
    expect(report.denials).toBeGreaterThan(500);
    expect(report.refunds).toBeGreaterThan(100);
    expect(report.storeCalls).toBeGreaterThan(report.decisions);
  });

  it('passes a store that answers with promises (local: false)', async () => {
    const report = await checkStoreParity(remote, { seeds: [1, 2] });
    expect(report.traces).toBe(22);
  });

  it('catches a store that reads its own clock', async () => {
    const own = () => new MemoryStore({ clock: () => Date.now() });
    await expect(checkStoreParity(own, { seeds: [1] })).rejects.toThrow(
      /fixed-window, trace 1 of 1: store call 0 \(consume of cost \d by "[^"]*" at 1700000000\d+\) answered/,
    );
  });

  it('catches a store whose refunds give nothing back', async () => {
    const stingy = (clock: () => number): Store => {
      const memory = new MemoryStore({ clock });
      return {
        local: true,
        consume: (c) => memory.consume(c),
        refund: () => {},
        reset: (l, s) => memory.reset(l, s),
      };
    };
    await expect(checkStoreParity(stingy, { policySets: singlePolicySets.slice(0, 1) })).rejects.toThrow(
      /where MemoryStore answered/,
    );
  });

  it('names a store that hangs instead of waiting for the test timeout', async () => {
    const hanging: Store = {
      local: false,
      consume: () => new Promise(() => {}),
      refund: () => {},
      reset: () => {},
    };
    await expect(
      checkStoreParity(() => hanging, {
        seeds: [1],
        policySets: singlePolicySets.slice(0, 1),
        timeoutMs: 50,
      }),
    ).rejects.toThrow(/store call 0 \(consume .*\) failed: no answer within 50 ms/);
  });
});

describe('checkStoreAtomicity', () => {
  it('passes MemoryStore, in process and behind promises', async () => {
    const memory = new MemoryStore();
    expect(await checkStoreAtomicity(() => memory)).toEqual({
      cases: 10,
      calls: 10 * 4 * 250,
      allowed: 10 * 500,
    });
    // MemoryStore holds its counters in the object: the four "connections" are one object.
    const shared = remote(Date.now);
    expect((await checkStoreAtomicity(() => shared, { limit: 100 })).allowed).toBe(1000);
  });

  it('catches a store that checks and charges in two steps', async () => {
    const shared = checkThenCharge(Date.now);
    await expect(checkStoreAtomicity(() => shared, { limit: 50 })).rejects.toThrow(
      /^fixed-window, 4 bursts: \d+ calls allowed, where the limit is 50$/,
    );
  });

  it('catches a store that charges policies that did not deny', async () => {
    const shared = policyByPolicy(Date.now);
    await expect(checkStoreAtomicity(() => shared, { limit: 50 })).rejects.toThrow(
      /fixed-window \+ sliding-window, 4 bursts: the policies have \[0,0\] left, where \[0,10\] was expected/,
    );
  });
});

import { createLimiter, MemoryStore, type Policy } from '@sluice/core';
import { manualClock, randomTrace, referenceTrace, runTrace } from '@sluice/core/testing';
import { expectOnlyWarnings } from '../../../../../test/support/warnings.js';
import { ALIGNED, expectExactRetry, expectNothingCharged, harness, stepOf } from '../../../test/harness.js';
import { IN_PLACE } from '../algorithm.js';
import { slidingLog } from './sliding-log.js';

const policy = { limit: 3, window: 1000, algorithm: 'sliding-log' } as const;
const params = { limit: 3, windowMs: 1000, burst: 3 };

describe('sliding-log', () => {
  it('counts exactly the calls in (now - window, now]', () => {
    const h = harness(policy, ALIGNED + 500);
    h.consume();
    h.clock.advance(100);
    h.consume();
    h.clock.advance(100);
    expect(h.consume()).toMatchObject({ allowed: true, remaining: 0, resetMs: 1000 });
    h.clock.advance(100);
    // The first entry leaves the window at its time + window: 700 ms from now.
    const denied = h.consume();
    expect(denied).toMatchObject({ allowed: false, remaining: 0, resetMs: 900, retryAfterMs: 700 });
    expectExactRetry(h, denied);
  });

  it('has no window edge: at most limit in any window, wherever it starts', () => {
    const h = harness(policy, ALIGNED + 999);
    h.consume(3);
    h.clock.advance(1);
    expect(h.consume().allowed).toBe(false);
    h.clock.advance(998);
    expect(h.consume().allowed).toBe(false);
    h.clock.advance(1);
    expect(h.consume(3).allowed).toBe(true);
  });

  it('waits for as many entries to leave as the cost needs', () => {
    const h = harness(policy);
    h.consume();
    h.clock.advance(200);
    h.consume();
    h.clock.advance(200);
    h.consume();
    const denied = h.consume(2);
    // Two entries must leave: the second at 200 + 1000.
    expect(denied.retryAfterMs).toBe(800);
    expectExactRetry(h, denied, 2);
  });

  it('resets when the newest entry leaves the window', () => {
    const h = harness(policy);
    h.consume();
    h.clock.advance(300);
    h.consume();
    h.clock.advance(100);
    expect(h.peek().resetMs).toBe(900);
    h.clock.advance(900);
    expect(h.peek()).toMatchObject({ remaining: 3, resetMs: 0 });
  });

  it('charges nothing for a rejected call, and Infinity for a cost above the limit', () => {
    const h = harness(policy);
    h.consume(2);
    expectNothingCharged(h, 2);
    expect(expectNothingCharged(h, 4).retryAfterMs).toBe(Number.POSITIVE_INFINITY);
  });

  it('stores each entry once with its cost, calls in one ms sharing an entry, never more than limit entries', () => {
    let state = stepOf(slidingLog, undefined, 0, 1, params, 0).next;
    state = stepOf(slidingLog, state, 0, 2, params, 0).next;
    expect(state).toEqual([3, 0, 1, 0, 3]);
    state = undefined;
    for (let t = 0; t < 10_000; t += 7) {
      const step = stepOf(slidingLog, state, t, 1, params, 0);
      if (step.allowed) state = step.next;
      expect(state!.length).toBeLessThanOrEqual(3 + 2 * params.limit);
    }
  });

  it('refunds the entry of the call that charged it', async () => {
    const h = harness(policy);
    const first = h.consume(2);
    h.clock.advance(10);
    h.consume();
    await first.refund!();
    expect(h.peek()).toMatchObject({ remaining: 2, resetMs: 1000 });
  });
});

/** The ring of a state held from `at` on, unrolled: [used, 0, count, entries in time order]. */
function unrolled(slot: number[], at: number): number[] {
  const cap = (slot.length - at - 3) / 2;
  const out = [slot[at]!, 0, slot[at + 2]!];
  for (let k = 0; k < slot[at + 2]!; k++) {
    const i = at + 3 + 2 * ((slot[at + 1]! + k) % cap);
    out.push(slot[i]!, slot[i + 1]!);
  }
  return out;
}

describe('sliding-log ring (record, in place)', () => {
  const AT = 2;
  /** A seeded generator (mulberry32), so a failure replays. */
  const seeded = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  it('decides and stores as the copying step does, through wrap-around, growth, cost > 1, refunds and limit changes', () => {
    const random = seeded(32);
    const int = (n: number) => Math.floor(random() * n);
    let wrapped = 0;
    let grownWrapped = 0;
    for (let run = 0; run < 30; run++) {
      // The ring in a store's slot (two numbers before the state), and the log the copying step keeps.
      let slot: number[] | undefined;
      let copy: number[] | undefined;
      let now = 1_000;
      const charged: Array<{ at: number; cost: number }> = [];
      let p = { limit: 1 + int(12), windowMs: 5 + int(40), burst: 0 };
      for (let call = 0; call < 300; call++) {
        now += int(4);
        // The same key under a new limit (a redeploy with a changed policy).
        if (random() < 0.03) p = { ...p, limit: 1 + int(12) };
        const roll = random();
        if (roll < 0.08 && charged.length > 0 && slot !== undefined) {
          const c = charged[int(charged.length)]!;
          const charge = { cost: c.cost, chargedAt: c.at, leaseId: 0 };
          const fromRing = slidingLog.refund(slot.slice(AT), now, charge, p);
          const fromCopy = slidingLog.refund(copy, now, charge, p);
          expect(unrolled(fromRing.next!, 0)).toEqual(unrolled(fromCopy.next!, 0));
          expect(fromRing.expiresAt).toBe(fromCopy.expiresAt);
          slot = [0, 0, ...fromRing.next!];
          copy = fromCopy.next;
          continue;
        }
        const cost = roll < 0.15 ? 0 : 1 + int(3);
        const byCopy = stepOf(slidingLog, copy, now, cost, p);
        const { next: _n, ...expected } = byCopy;
        const inPlace = slidingLog.step(slot, AT, now, cost, p, 0, IN_PLACE);
        expect(inPlace).toEqual(expected);
        if (!inPlace.allowed || cost === 0) continue;
        charged.push({ at: now, cost });
        copy = byCopy.next;
        if (slot === undefined) slot = [0, 0, ...byCopy.next!];
        else {
          const cap = (slot.length - AT - 3) / 2;
          const head = slot[AT + 1]!;
          if (head + slot[AT + 2]! > cap) wrapped++;
          const held = slidingLog.record!(slot, AT, now, cost, p);
          if (held !== slot && head > 0) grownWrapped++;
          slot = held;
        }
        expect(unrolled(slot, AT)).toEqual(unrolled(copy!, 0));
        expect((slot.length - AT - 3) / 2).toBeLessThanOrEqual(Math.max(p.limit, 12));
      }
    }
    // The runs went through the ring's edge cases, not only its easy path.
    expect(wrapped).toBeGreaterThan(100);
    expect(grownWrapped).toBeGreaterThan(5);
  });

  it('makes a ring three quarters empty smaller: a burst that has left does not keep its room', () => {
    const random = seeded(33);
    const int = (n: number) => Math.floor(random() * n);
    let shrunk = 0;
    const p = { limit: 400, windowMs: 500, burst: 400 };
    let slot: number[] | undefined;
    let copy: number[] | undefined;
    let now = 1_000;
    for (let call = 0; call < 6000; call++) {
      // Bursts of calls a millisecond apart, then quiet spells of one call now and then.
      now += Math.floor(call / 300) % 2 === 0 ? 1 : 20 + int(20);
      const cost = 1 + int(2);
      const byCopy = stepOf(slidingLog, copy, now, cost, p);
      const { next: _n, ...expected } = byCopy;
      expect(slidingLog.step(slot, AT, now, cost, p, 0, IN_PLACE)).toEqual(expected);
      if (!byCopy.allowed) continue;
      copy = byCopy.next;
      if (slot === undefined) slot = [0, 0, ...byCopy.next!];
      else {
        const cap = (slot.length - AT - 3) / 2;
        slot = slidingLog.record!(slot, AT, now, cost, p);
        if ((slot.length - AT - 3) / 2 < cap) shrunk++;
      }
      expect(unrolled(slot, AT)).toEqual(unrolled(copy!, 0));
      expect((slot.length - AT - 3) / 2).toBeLessThanOrEqual(Math.max(64, 4 * slot[AT + 2]!));
    }
    expect(shrunk).toBeGreaterThan(5);
  });

  it('grows a full ring that wraps, keeping its order', () => {
    const p = { limit: 8, windowMs: 4, burst: 8 };
    let slot = [0, 0, ...stepOf(slidingLog, undefined, 0, 1, p).next!];
    for (const t of [1, 2, 3]) slot = slidingLog.record!(slot, 2, t, 1, p);
    // Ring of 4: [0, 1, 2, 3]. At 4 the entry of 0 leaves and 4 takes its place: head 1, wrapped.
    slot = slidingLog.record!(slot, 2, 4, 1, p);
    expect(slot.slice(2)).toEqual([4, 1, 4, 4, 1, 1, 1, 2, 1, 3, 1]);
    // At 4 again: the newest entry (4 ms) takes the cost.
    slot = slidingLog.record!(slot, 2, 4, 2, p);
    // At 5 under a longer window nothing leaves: the ring is full and wrapped, and grows to the limit.
    const held = slidingLog.record!(slot, 2, 5, 1, { ...p, windowMs: 10 });
    expect(held).not.toBe(slot);
    expect(held.slice(0, 2)).toEqual(slot.slice(0, 2));
    expect(held.slice(2)).toEqual([7, 0, 5, 1, 1, 2, 1, 3, 1, 4, 3, 5, 1, 0, 0, 0, 0, 0, 0]);
  });

  it('passes a limit lowered under a ring larger than it: denied until enough has left', () => {
    const wide = { limit: 6, windowMs: 100, burst: 6 };
    let slot = [0, 0, ...stepOf(slidingLog, undefined, 0, 1, wide).next!];
    for (let t = 1; t < 6; t++) slot = slidingLog.record!(slot, 2, t, 1, wide);
    const narrow = { limit: 2, windowMs: 100, burst: 2 };
    expect(slidingLog.step(slot, 2, 50, 1, narrow, 0, IN_PLACE)).toMatchObject({
      allowed: false,
      remaining: -4,
      // Five entries must leave for one call to fit: the fifth, at 4 ms, leaves at 104.
      retryAfterMs: 54,
    });
    const allowed = slidingLog.step(slot, 2, 104, 1, narrow, 0, IN_PLACE);
    expect(allowed).toMatchObject({ allowed: true, remaining: 0 });
    slot = slidingLog.record!(slot, 2, 104, 1, narrow);
    expect(unrolled(slot, 2)).toEqual([2, 0, 2, 5, 1, 104, 1]);
  });

  it('is never written to by a step given IN_PLACE', () => {
    expect(() => stepOf(slidingLog, undefined, 0, 1, params).next).not.toThrow();
    expect(Object.isFrozen(IN_PLACE)).toBe(true);
    expect(slidingLog.step(undefined, 0, 0, 1, params, 0, IN_PLACE).allowed).toBe(true);
    expect(IN_PLACE).toEqual([]);
  });

  it('on MemoryStore, decides as the reference model through the ring, alone and beside another policy', async () => {
    const policySets: Policy[][] = [
      [{ name: 'log', limit: 7, window: '40ms', algorithm: 'sliding-log' }],
      [
        { name: 'log', limit: 7, window: '40ms', algorithm: 'sliding-log' },
        { name: 'wide', limit: 20, window: '90ms', algorithm: 'sliding-log', scope: 'global' },
        { name: 'fw', limit: 9, window: '50ms' },
      ],
    ];
    for (const policies of policySets) {
      for (let seed = 1; seed <= 6; seed++) {
        const trace = randomTrace({ seed, length: 400, subjects: ['a', 'b'], maxCost: 3, maxAdvanceMs: 30 });
        const options = { name: 'ring', policies };
        const expected = referenceTrace(options, trace);
        const actual = await runTrace(
          (clock) => createLimiter({ ...options, store: new MemoryStore({ clock }) }),
          trace,
        );
        expect(actual).toEqual(expected);
      }
    }
  });
});

describe('sliding-log ring on MemoryStore, its limit changed', () => {
  const warned = expectOnlyWarnings('ERR_SLUICE_NAME_REUSE');

  it('reads the ring of one key under a limit changed between calls', () => {
    const clock = manualClock(ALIGNED);
    const store = new MemoryStore({ clock });
    const under = (limit: number) =>
      createLimiter({
        name: 'l',
        policies: [{ name: 'p', limit, window: '100ms', algorithm: 'sliding-log' }],
        store,
      });
    // Two limiters of one name and policy, their limits apart: what a redeploy with a new limit does.
    const [wide, narrow] = [under(6), under(2)];
    expect(warned.codes).toEqual(['ERR_SLUICE_NAME_REUSE']);
    for (let t = 0; t < 6; t++) {
      expect(wide.decide('s', 1, 'consume')).toMatchObject({ allowed: true, remaining: 5 - t });
      clock.advance(10);
    }
    // The same key under limit 2: six entries held, five must leave before one call fits (the fifth,
    // of 40 ms, at 140 ms; now is 60).
    expect(narrow.decide('s', 1, 'consume')).toMatchObject({
      allowed: false,
      remaining: -4,
      retryAfterMs: 80,
    });
    clock.advance(80);
    expect(narrow.decide('s', 1, 'consume')).toMatchObject({ allowed: true, remaining: 0 });
    expect(wide.decide('s', 1, 'consume')).toMatchObject({ allowed: true, remaining: 3 });
    expect(wide.decide('s', 2, 'consume')).toMatchObject({ allowed: true, remaining: 1 });
    expect(narrow.decide('s', 1, 'consume')).toMatchObject({ allowed: false, remaining: -3 });
  });
});

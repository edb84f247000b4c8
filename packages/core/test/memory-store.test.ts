import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createLimiter, type Decision, MemoryStore, type Policy } from '@sluice/core';
import { manualClock } from '@sluice/core/testing';
import { ALIGNED } from './harness.js';

const perMinute: Policy = { limit: 1000, window: '1m', algorithm: 'fixed-window' };

function setup(maxKeys?: number) {
  const clock = manualClock(ALIGNED);
  const store = new MemoryStore(maxKeys === undefined ? { clock } : { clock, maxKeys });
  const limiter = createLimiter({ policies: [perMinute], store });
  const consume = (subject: string) => limiter.decide(subject, 1, 'consume') as Decision;
  /** The calls the store remembers for `subject` (0 once it is evicted or expired). */
  const uses = (subject: string) => 1000 - (limiter.decide(subject, 1, 'peek') as Decision).remaining;
  return { clock, store, limiter, consume, uses };
}

describe('MemoryStore bounds', () => {
  it('never holds more than maxKeys under a million distinct subjects', () => {
    const { store, consume } = setup(10_000);
    let largest = 0;
    for (let i = 0; i < 1_000_000; i++) {
      consume(`s${i}`);
      if (store.size > largest) largest = store.size;
    }
    expect(largest).toBe(10_000);
    expect(store.size).toBe(10_000);
  });

  it('holds at most the default 1,000,000 keys', () => {
    const { store, consume } = setup();
    for (let i = 0; i < 1_050_000; i++) consume(`s${i}`);
    expect(store.size).toBe(1_000_000);
  });
});

describe('MemoryStore eviction order', () => {
  it('evicts the least recently used first', () => {
    // maxKeys 8: a key is moved to the young end when used after 2 or more newer insertions.
    const { store, consume, uses } = setup(8);
    for (let i = 0; i < 8; i++) consume(`k${i}`);
    consume('k0');
    consume('k1');
    consume('n1');
    consume('n2');
    expect(store.size).toBe(8);
    expect(['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'n1', 'n2'].map(uses)).toEqual([
      2, 2, 0, 0, 1, 1, 1, 1, 1, 1,
    ]);
  });

  it('keeps keys that are used and lets go of the ones that are not', () => {
    const { store, consume, uses } = setup(100);
    for (let i = 0; i < 100; i++) consume(`old${i}`);
    for (let i = 0; i < 900; i++) {
      consume('favourite');
      consume(`new${i}`);
    }
    expect(store.size).toBe(100);
    expect(uses('favourite')).toBe(900);
    expect(uses('old0')).toBe(0);
    expect(uses('old99')).toBe(0);
    expect(uses('new899')).toBe(1);
    expect(uses('new800')).toBe(0);
  });

  it('evicts the least recently used across the namespaces of several limiters', () => {
    const store = new MemoryStore({ clock: manualClock(ALIGNED), maxKeys: 4 });
    const a = createLimiter({ name: 'a', policies: [perMinute], store });
    const b = createLimiter({ name: 'b', policies: [perMinute], store });
    const take = (limiter: typeof a, subject: string) => limiter.decide(subject, 1, 'consume');
    take(a, 'a1');
    take(b, 'b1');
    take(a, 'a2');
    take(b, 'b2');
    take(b, 'b3');
    take(a, 'a3');
    take(a, 'a4');
    const kept = (limiter: typeof a, subject: string) =>
      (limiter.decide(subject, 1, 'peek') as Decision).remaining < 1000;
    expect([kept(a, 'a1'), kept(b, 'b1'), kept(a, 'a2'), kept(b, 'b2')]).toEqual([false, false, false, true]);
    expect([kept(b, 'b3'), kept(a, 'a3'), kept(a, 'a4')]).toEqual([true, true, true]);
  });

  it('evicts expired keys before live ones, across namespaces', () => {
    const clock = manualClock(ALIGNED);
    const store = new MemoryStore({ clock, maxKeys: 4 });
    const hourly = createLimiter({ name: 'hourly', limit: 2, window: '1h', store });
    const brief = createLimiter({ name: 'brief', limit: 2, window: '1s', store });
    hourly.decide('h1', 1, 'consume');
    hourly.decide('h2', 1, 'consume');
    brief.decide('b1', 1, 'consume');
    brief.decide('b2', 1, 'consume');
    clock.advance(5_000);
    hourly.decide('h3', 1, 'consume');
    hourly.decide('h4', 1, 'consume');
    expect(store.size).toBe(4);
    const remaining = (s: string) => (hourly.decide(s, 1, 'peek') as Decision).remaining;
    expect(['h1', 'h2', 'h3', 'h4'].map(remaining)).toEqual([1, 1, 1, 1]);
  });
});

describe('MemoryStore expiry', () => {
  it('creates no timer, however many keys it holds', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const { consume, clock } = setup(1000);
    for (let i = 0; i < 5000; i++) consume(`s${i}`);
    clock.advance(120_000);
    for (let i = 0; i < 100; i++) consume(`t${i}`);
    const fresh = createLimiter({ limit: 1, window: '1s' });
    await fresh.consume('x');
    expect(timers()).toBe(before);
  });

  it('drops an expired key when it is read, and sweeps expired keys a few per insert', () => {
    const { store, limiter, consume, clock } = setup();
    for (let i = 0; i < 1000; i++) consume(`old${i}`);
    clock.advance(61_000);
    expect(store.size).toBe(1000); // nothing runs between calls
    expect(limiter.decide('old0', 1, 'peek')).toMatchObject({ remaining: 1000 });
    expect(store.size).toBe(999);
    for (let i = 0; i < 600; i++) consume(`new${i}`);
    expect(store.size).toBe(600);
  });

  it('does not store a peek or a denied call', () => {
    const { store, limiter, consume } = setup();
    limiter.decide('peeker', 1, 'peek');
    consume('a');
    limiter.decide('a', 999, 'consume');
    const size = store.size;
    expect(consume('a').allowed).toBe(false);
    limiter.decide('b', 1001, 'consume');
    expect(store.size).toBe(size);
    expect(store.size).toBe(1);
  });
});

describe('MemoryStore default clock', () => {
  /** createLimiter of a fresh copy of the module: no reading left by earlier tests. */
  let freshLimiter: typeof createLimiter;
  beforeEach(() => {
    jest.isolateModules(() => {
      freshLimiter = require('../src/limiter.js').createLimiter;
    });
  });
  afterEach(() => jest.useRealTimers());

  it('shares a Date.now reading between calls until a timer turn 1 ms on, or 32 calls, have passed', () => {
    jest.useFakeTimers({ now: ALIGNED });
    const limiter = freshLimiter({ limit: 100, window: '1s', algorithm: 'fixed-window' });
    const resetMs = () => (limiter.decide('s', 1, 'consume') as Decision).resetMs;
    expect(resetMs()).toBe(1000);
    jest.setSystemTime(ALIGNED + 400);
    // Date moved but no timer ran: the reading stands, for 32 calls in all.
    for (let call = 2; call <= 32; call++) expect(resetMs()).toBe(1000);
    expect(resetMs()).toBe(600);
    jest.setSystemTime(ALIGNED + 500);
    expect(resetMs()).toBe(600);
    jest.advanceTimersByTime(1);
    expect(resetMs()).toBe(499);
  });

  it('sets a new timer when the last one was lost (fake timers uninstalled before it ran)', () => {
    jest.useFakeTimers({ now: ALIGNED });
    const limiter = freshLimiter({ limit: 100, window: '1s', algorithm: 'fixed-window' });
    const resetMs = () => (limiter.decide('s', 1, 'consume') as Decision).resetMs;
    expect(resetMs()).toBe(1000);
    jest.useRealTimers();
    jest.useFakeTimers({ now: ALIGNED + 1400 });
    for (let call = 2; call <= 32; call++) expect(resetMs()).toBe(1000);
    expect(resetMs()).toBe(600);
    jest.setSystemTime(ALIGNED + 1500);
    jest.advanceTimersByTime(1);
    expect(resetMs()).toBe(499);
  });
});

describe('MemoryStore reset and refund', () => {
  it('resets one subject under every subject-scoped policy, never a global counter', async () => {
    const clock = manualClock(ALIGNED);
    const store = new MemoryStore({ clock });
    const limiter = createLimiter({
      policies: [
        { name: 'mine', limit: 2, window: '1m' },
        { name: 'shared', limit: 10, window: '1m', scope: 'global' },
      ],
      store,
    });
    await limiter.consume('a');
    await limiter.consume('b');
    expect(store.size).toBe(3);
    await limiter.reset('a');
    // The subject's key is replaced by its reset mark (what later refunds of older charges read).
    expect(store.size).toBe(3);
    expect((await limiter.peek('a')).policies.map((p) => p.remaining)).toEqual([2, 8]);
    await limiter.reset('nobody');
    expect(store.size).toBe(4);
  });

  it('refunds into the key that was charged, and creates no key for a subject it forgot', async () => {
    const { store, limiter, clock } = setup();
    const a = await limiter.consume('a');
    const b = await limiter.consume('b');
    await a.refund!();
    expect((await limiter.peek('a')).remaining).toBe(1000);
    clock.advance(60_000);
    await limiter.reset('b');
    const size = store.size;
    await b.refund!();
    expect(store.size).toBe(size);
  });
});

describe('MemoryStore memory', () => {
  it('holds a subject of one sliding-window policy in under 200 bytes of heap', () => {
    const launcher = join(__dirname, '../../../test/support/ts-register.cjs');
    const script = join(__dirname, 'memory/measure-memory.ts');
    const child = spawnSync(process.execPath, ['--expose-gc', launcher, script, '200000'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).toBe('');
    const { keys, bytesPerSubject } = JSON.parse(child.stdout) as { keys: number; bytesPerSubject: number };
    expect(keys).toBe(201_000);
    expect(bytesPerSubject).toBeGreaterThan(50);
    expect(bytesPerSubject).toBeLessThan(200);
  });
});

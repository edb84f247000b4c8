/**
 * The cases of the core suite: Sluice (every algorithm and a two-policy limiter, through `consume`
 * and the synchronous `decide`) and the peers' memory stores, on the allowed path (limits never
 * reached) and on the denied path. Each case is built alone, in the process that measures it.
 */
import { createRequire } from 'node:module';
import { LIMITER_CASES, takesLease, UNREACHED } from '../lib/policies.mjs';

const require = createRequire(import.meta.url);
const WINDOW_MS = 60_000;
/** The sliding-window case with a subscriber on the sluice:decision channel. */
const SUBSCRIBED = 'sliding-window, sluice:decision subscribed';

/** Every case: its id (what the measuring process is given) and what the report shows. */
export function coreCases(smoke) {
  const cases = [];
  const add = (path, impl, label, api, subjects) =>
    cases.push({ id: [path, impl, label, api, subjects].join('|'), path, impl, case: label, api, subjects });
  const shapes = smoke ? ['hot'] : ['hot', 'spread'];
  const labels = smoke ? ['sliding-window', 'two policies'] : LIMITER_CASES.map((c) => c.label);
  for (const label of labels)
    for (const api of ['consume', 'decide']) for (const s of shapes) add('allowed', 'sluice', label, api, s);
  // The allowed path with somebody listening on sluice:decision (the diagnostics channel), beside the
  // sliding-window rows above (nobody listening): what observability costs when on, and off.
  for (const s of shapes) add('allowed', 'sluice', SUBSCRIBED, 'decide', s);
  for (const s of shapes) {
    add('allowed', 'express-rate-limit', 'fixed-window', 'MemoryStore.increment', s);
    add('allowed', 'rate-limiter-flexible', 'fixed-window', 'RateLimiterMemory.consume', s);
    add('allowed', '@fastify/rate-limit', 'fixed-window', 'LocalStore.incr', s);
  }
  // What any promise API costs here before it decides anything: the floor under `consume`.
  for (const s of shapes) add('allowed', 'promise floor', 'none', 'await Promise.resolve(object)', s);
  // What `consume` costs at least under the contract, with no algorithm: the floor under its answer.
  for (const s of shapes) add('allowed', 'decision floor', 'none', 'a fresh Decision through a promise', s);
  // The same with Sluice's own sliding-window step in it: `consume` fused into one function.
  for (const s of shapes) add('allowed', 'fused floor', 'sliding-window', 'the step and a fresh Decision', s);
  add('denied', 'sluice', 'sliding-window', 'consume', 'hot');
  add('denied', 'sluice', 'sliding-window', 'decide', 'hot');
  add('denied', 'rate-limiter-flexible', 'fixed-window', 'RateLimiterMemory.consume', 'hot');
  return cases;
}

/** An allowed Decision as the contract shapes it, fresh: its policies array, one policy state, a refund. */
function freshDecision(remaining, resetMs, refund) {
  return {
    allowed: true,
    limit: UNREACHED,
    remaining,
    resetMs,
    retryAfterMs: 0,
    policy: 'per-minute',
    policies: [
      {
        name: 'per-minute',
        algorithm: 'sliding-window',
        limit: UNREACHED,
        windowMs: WINDOW_MS,
        remaining,
        resetMs,
        allowed: true,
      },
    ],
    refund,
  };
}

/**
 * The operation of one case, on one subject: `op(subject)`, and whether it returns a promise.
 * `subjects` is how many distinct subjects it will see (sizes the @fastify/rate-limit LRU).
 */
export async function operationOf({ path, impl, case: label, api }, subjects) {
  if (impl === 'sluice') {
    const { createLimiter } = await import('@sluice/core');
    const subscribed = label === SUBSCRIBED;
    if (subscribed) (await import('node:diagnostics_channel')).subscribe('sluice:decision', () => {});
    const policies =
      path === 'denied'
        ? [{ limit: 100, window: '1h' }]
        : LIMITER_CASES.find((c) => c.label === (subscribed ? 'sliding-window' : label)).policies;
    const limiter = createLimiter({ name: label, policies });
    // A concurrency decision holds a lease: one operation is take and give back.
    const lease = takesLease(policies);
    if (api === 'consume') {
      return lease
        ? { isAsync: true, op: async (s) => (await limiter.consume(s)).release() }
        : { isAsync: true, op: (s) => limiter.consume(s) };
    }
    return lease
      ? { isAsync: false, op: (s) => limiter.decide(s, 1, 'consume').release() }
      : { isAsync: false, op: (s) => limiter.decide(s, 1, 'consume') };
  }
  if (impl === 'promise floor') {
    const answer = { allowed: true };
    return { isAsync: true, op: () => Promise.resolve(answer) };
  }
  if (impl === 'decision floor') {
    // A subject's count found in a Map and raised by one, then the answer the contract asks of
    // `consume`: a fresh Decision with its policies array, its one policy state and a refund, through
    // a resolved promise. No algorithm, no clock, no checks: no limiter keeping the contract does less.
    const counts = new Map();
    return {
      isAsync: true,
      op: (s) => {
        let slot = counts.get(s);
        if (slot === undefined) {
          slot = [0];
          counts.set(s, slot);
        }
        slot[0]++;
        return Promise.resolve(
          freshDecision(UNREACHED - slot[0], WINDOW_MS, async () => {
            slot[0]--;
          }),
        );
      },
    };
  }
  if (impl === 'fused floor') {
    // The decision floor with a real decision in it: the subject checked, the clock read (once per 32
    // calls, as Sluice's default clock), the subject's state found in a Map, Sluice's own sliding-window
    // step run on it and written back in place, a refund that gives the charge back with the algorithm's
    // own refund. No key encoding, expiry, eviction or layering: `consume` as one function, so no Sluice
    // `consume` can be faster. The step is the limiter's own algorithm value, read from its store plan
    // (a private field: the package exports no algorithm).
    const { createLimiter } = await import('@sluice/core');
    const { policies } = LIMITER_CASES.find((c) => c.label === 'sliding-window');
    const limiter = createLimiter({ name: label, policies });
    const { algorithm, params } = limiter.target.policies[0];
    const states = new Map();
    const next = [];
    let reading = 0;
    let uses = 0;
    const giveBack = (s, chargedAt) => {
      const charge = { cost: 1, chargedAt, leaseId: 0 };
      states.set(s, algorithm.refund(states.get(s), Date.now(), charge, params).next);
    };
    return {
      isAsync: true,
      op: (s) => {
        if (typeof s !== 'string') return Promise.reject(new TypeError('subject must be a string'));
        if (uses-- === 0) {
          reading = Date.now();
          uses = 31;
        }
        const state = states.get(s);
        const step = algorithm.step(state, 0, reading, 1, params, 0, next);
        if (state === undefined) states.set(s, next.slice());
        else for (let i = 0; i < next.length; i++) state[i] = next[i];
        const chargedAt = reading;
        return Promise.resolve(
          freshDecision(step.remaining, step.resetMs, async () => giveBack(s, chargedAt)),
        );
      },
    };
  }
  if (impl === 'express-rate-limit') {
    const { MemoryStore } = await import('express-rate-limit');
    const store = new MemoryStore();
    store.init({ windowMs: WINDOW_MS });
    return { isAsync: true, op: (s) => store.increment(s) };
  }
  if (impl === 'rate-limiter-flexible') {
    const { RateLimiterMemory } = await import('rate-limiter-flexible');
    if (path === 'denied') {
      const limiter = new RateLimiterMemory({ points: 100, duration: 3600 });
      // It refuses by rejecting the promise.
      const refused = () => {};
      return { isAsync: true, op: (s) => limiter.consume(s).catch(refused) };
    }
    const limiter = new RateLimiterMemory({ points: UNREACHED, duration: WINDOW_MS / 1000 });
    return { isAsync: true, op: (s) => limiter.consume(s) };
  }
  // Not in the package's exports (it has none): the class the plugin counts with in memory. Its
  // default cache holds 5,000 keys; it is sized to hold every subject, as a user would set it.
  const LocalStore = require('@fastify/rate-limit/store/LocalStore.js');
  const store = new LocalStore(false, false, Math.max(5000, subjects * 2));
  const ignore = () => {};
  return { isAsync: false, op: (s) => store.incr(s, ignore, WINDOW_MS, UNREACHED) };
}

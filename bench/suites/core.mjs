/**
 * Core: in-process decisions per second on memory stores. Sluice's sliding-window (every algorithm and
 * two policies in the full run), through `consume` and the synchronous `decide`, beside the memory
 * stores of express-rate-limit, rate-limiter-flexible and @fastify/rate-limit and beside the floors;
 * one hot subject and many round robin; the denied path; a sliding log kept full at limits 10, 1,000
 * and 10,000 (issue 32 target 4: a call's cost must not grow with the limit). Each case is timed in a fresh process (no
 * case's JIT state depends on which ran before it), in interleaved rounds (A B C … A B C …).
 *
 *   node bench/suites/core.mjs [--smoke|--full]               the suite
 *   node bench/suites/core.mjs --profile consume hot [sliding-window|two|…] [seconds]
 *                                                             where a decision spends its time
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Bench } from 'tinybench';
import {
  FULL,
  LIMITER_CASES,
  pick,
  policiesOf,
  progress,
  SMOKE,
  subjects,
  summarize,
  takesLease,
  UNREACHED,
  writeResults,
} from '../lib/common.mjs';
import { profiled, topFunctions } from '../lib/profile.mjs';
import { rate } from '../lib/targets.mjs';

const HERE = fileURLToPath(import.meta.url);
const WINDOW_MS = 60_000;
/** The sliding-window case with a subscriber on the sluice:decision channel. */
const SUBSCRIBED = 'sliding-window, sluice:decision subscribed';
const PEERS = [
  ['express-rate-limit', 'MemoryStore.increment'],
  ['rate-limiter-flexible', 'RateLimiterMemory.consume'],
  ['@fastify/rate-limit', 'LocalStore.incr'],
];

/** Limits of the full-log cases (issue 32 target 4): the largest at most 2x the smallest per call. */
export const FULL_LOG_LIMITS = [10, 1_000, 10_000];
/** The label of a full-log case, as the report and the targets find it. */
export const fullLogLabel = (limit) => `sliding-log, limit ${limit}, full log`;

/** Every case of this mode: its id (what the measuring process is given) and what the report shows. */
function coreCases() {
  const cases = [];
  const add = (path, impl, label, api, shape) =>
    cases.push({ id: [path, impl, label, api, shape].join('|'), path, impl, case: label, api, shape });
  const shapes = SMOKE ? ['hot'] : ['hot', 'spread'];
  const labels = FULL
    ? LIMITER_CASES.map((c) => c.label)
    : SMOKE
      ? ['sliding-window', 'two policies']
      : ['sliding-window'];
  for (const label of labels)
    for (const api of ['consume', 'decide']) for (const s of shapes) add('allowed', 'sluice', label, api, s);
  for (const s of shapes) {
    for (const [impl, api] of PEERS) add('allowed', impl, 'fixed-window', api, s);
    // consume fused into one function: no Sluice `consume` can be faster.
    add('allowed', 'fused floor', 'sliding-window', 'the step and a fresh Decision', s);
    if (!FULL) continue;
    // What observability costs when somebody listens on sluice:decision (beside nobody listening).
    add('allowed', 'sluice', SUBSCRIBED, 'decide', s);
  }
  for (const api of ['consume', 'decide']) add('denied', 'sluice', 'sliding-window', api, 'hot');
  add('denied', 'rate-limiter-flexible', 'fixed-window', 'RateLimiterMemory.consume', 'hot');
  for (const limit of FULL_LOG_LIMITS) add('full log', 'sluice', fullLogLabel(limit), 'consume', 'hot');
  return cases;
}

/** An allowed Decision as the contract shapes it, fresh: its policies array, one policy state, a refund. */
function freshDecision(remaining, resetMs, refund) {
  const policy = {
    name: 'per-minute',
    algorithm: 'sliding-window',
    limit: UNREACHED,
    windowMs: WINDOW_MS,
    remaining,
    resetMs,
    allowed: true,
  };
  return {
    allowed: true,
    limit: UNREACHED,
    remaining,
    resetMs,
    retryAfterMs: 0,
    policy: 'per-minute',
    policies: [policy],
    refund,
  };
}

/** The operation of one case on one subject, and whether it returns a promise. */
async function operationOf({ path, impl, case: label, api }, subjectCount) {
  if (path === 'full log') {
    // A sliding log held full: a clock that moves 1 ms a call (the op moves it: a call reads the clock
    // more than once) and a window of `limit` ms, so after `limit` calls the log holds `limit` entries
    // of cost 1, and each call drops the oldest and records itself, allowed with nothing left. The worst
    // case of the log, on every call; a call that finds the log otherwise throws.
    const { createLimiter, MemoryStore } = await import('@sluice/core');
    const limit = Number(/limit (\d+)/.exec(label)[1]);
    let now = 1_700_000_000_000;
    const store = new MemoryStore({ clock: () => now });
    const policies = [{ algorithm: 'sliding-log', limit, window: `${limit}ms` }];
    const limiter = createLimiter({ name: 'full-log', policies, store });
    let calls = 0;
    const op = async (s) => {
      now++;
      const d = await limiter.consume(s);
      if (++calls > limit && (!d.allowed || d.remaining !== 0))
        throw new Error(`${label}: the log was not full (allowed ${d.allowed}, remaining ${d.remaining})`);
      return d;
    };
    return { isAsync: true, op, fill: limit };
  }
  if (impl === 'sluice') {
    const { createLimiter } = await import('@sluice/core');
    if (label === SUBSCRIBED)
      (await import('node:diagnostics_channel')).subscribe('sluice:decision', () => {});
    const policies =
      path === 'denied'
        ? [{ limit: 100, window: '1h' }]
        : policiesOf(label === SUBSCRIBED ? 'sliding-window' : label);
    const limiter = createLimiter({ name: label, policies });
    // A concurrency decision holds a lease: one operation is take and give back.
    const lease = takesLease(policies);
    if (api === 'consume') {
      return {
        isAsync: true,
        op: lease ? async (s) => (await limiter.consume(s)).release() : (s) => limiter.consume(s),
      };
    }
    return {
      isAsync: false,
      op: lease ? (s) => limiter.decide(s, 1, 'consume').release() : (s) => limiter.decide(s, 1, 'consume'),
    };
  }
  if (impl === 'fused floor') {
    // The least `consume` can do under the contract with a real decision in it: the subject checked,
    // the clock read (once per 32 calls, as Sluice's default clock), the state found in a Map, Sluice's
    // own sliding-window step run on it and written back in place, a fresh Decision through a resolved
    // promise with a refund that uses the algorithm's own. No key encoding, expiry, eviction or
    // layering. The step is read from the limiter's plan (a private field: no algorithm is exported).
    const { createLimiter } = await import('@sluice/core');
    const limiter = createLimiter({ name: label, policies: policiesOf('sliding-window') });
    const { algorithm, params } = limiter.target.policies[0];
    const states = new Map();
    const next = [];
    let reading = 0;
    let uses = 0;
    const giveBack = (s, chargedAt) => {
      const charge = { cost: 1, chargedAt, leaseId: 0 };
      states.set(s, algorithm.refund(states.get(s), Date.now(), charge, params).next);
    };
    const op = (s) => {
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
      return Promise.resolve(freshDecision(step.remaining, step.resetMs, async () => giveBack(s, chargedAt)));
    };
    return { isAsync: true, op };
  }
  if (impl === 'express-rate-limit') {
    const { MemoryStore } = await import('express-rate-limit');
    const store = new MemoryStore();
    store.init({ windowMs: WINDOW_MS });
    return { isAsync: true, op: (s) => store.increment(s) };
  }
  if (impl === 'rate-limiter-flexible') {
    const { RateLimiterMemory } = await import('rate-limiter-flexible');
    const denied = path === 'denied';
    const limiter = new RateLimiterMemory(
      denied ? { points: 100, duration: 3600 } : { points: UNREACHED, duration: 60 },
    );
    // It refuses by rejecting the promise.
    const refused = () => {};
    return {
      isAsync: true,
      op: denied ? (s) => limiter.consume(s).catch(refused) : (s) => limiter.consume(s),
    };
  }
  // Not in the package's exports (it has none): the class the plugin counts with in memory, sized to
  // hold every subject (its default holds 5,000), as a user would set it.
  const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js');
  const store = new LocalStore(false, false, Math.max(5000, subjectCount * 2));
  const ignore = () => {};
  return { isAsync: false, op: (s) => store.incr(s, ignore, WINDOW_MS, UNREACHED) };
}

/** In a process of its own: one case's calls per second (tinybench, `batch` calls an iteration), or a plain loop for `seconds`. */
async function measureCase(id, settings, loopSeconds) {
  const [path, impl, label, api, shape] = id.split('|');
  const many = shape === 'hot' ? ['hot-subject'] : subjects(settings.subjects);
  const { op, isAsync, fill } = await operationOf({ path, impl, case: label, api }, many.length);
  // Every subject is known before timing (denied: the hot subject is over its limit; full log: full).
  const rounds = fill ?? (path === 'denied' ? 200 : 1);
  for (let round = 0; round < rounds; round++) for (const s of many) await op(s);
  let sink;
  let next = 0;
  const { batch } = settings;
  const loop = isAsync
    ? async () => {
        for (let i = 0; i < batch; i++) {
          sink = await op(many[next]);
          if (++next === many.length) next = 0;
        }
      }
    : () => {
        for (let i = 0; i < batch; i++) {
          sink = op(many[next]);
          if (++next === many.length) next = 0;
        }
      };
  if (loopSeconds !== undefined) {
    const until = Date.now() + loopSeconds * 1000;
    let calls = 0;
    for (; Date.now() < until; calls += batch) await loop();
    return { opsPerSec: calls / loopSeconds, sinkType: typeof sink };
  }
  const bench = new Bench({
    time: settings.timeMs,
    warmupTime: settings.warmupMs,
    iterations: 5,
    warmupIterations: 2,
  });
  bench.add(id, loop);
  await bench.run();
  const { result } = bench.tasks[0];
  if (result.state !== 'completed') throw result.error ?? new Error(`${id}: ${result.state}`);
  return { opsPerSec: (batch * 1000) / result.period, sinkType: typeof sink };
}

const settings = pick({
  smoke: { rounds: 1, timeMs: 100, warmupMs: 30, batch: 1000, subjects: 10_000 },
  quick: { rounds: 3, timeMs: 200, warmupMs: 60, batch: 1000, subjects: 10_000 },
  full: { rounds: 5, timeMs: 300, warmupMs: 100, batch: 1000, subjects: 100_000 },
});
const args = process.argv.slice(2);

if (args[0] === '--case') {
  const loopSeconds = args[3] === undefined ? undefined : Number(args[3]);
  process.stdout.write(JSON.stringify(await measureCase(args[1], JSON.parse(args[2]), loopSeconds)));
  process.exit(0);
} else if (args[0] === '--profile') {
  // One Sluice call shape in a loop under the profiler, in this process: where its time goes.
  const [, api = 'consume', shape = 'hot', algorithm = 'sliding-window', seconds = '3'] = args;
  const id = ['allowed', 'sluice', algorithm === 'two' ? 'two policies' : algorithm, api, shape].join('|');
  let result;
  const profile = await profiled(async () => {
    result = await measureCase(id, settings, Number(seconds));
  });
  console.log(`${id}: ${rate(result.opsPerSec)} calls/s under the profiler`);
  for (const line of topFunctions(profile)) console.log(line);
} else {
  const started = Date.now();
  const cases = coreCases();
  const perCase = new Map(cases.map((c) => [c.id, []]));
  progress(
    `core: ${cases.length} cases × ${settings.rounds} rounds of ${settings.timeMs} ms, a process each`,
  );
  for (let round = 0; round < settings.rounds; round++) {
    for (const c of cases) {
      const out = execFileSync(process.execPath, [HERE, '--case', c.id, JSON.stringify(settings)], {
        encoding: 'utf8',
      });
      perCase.get(c.id).push(JSON.parse(out).opsPerSec);
    }
    progress(`core: round ${round + 1}/${settings.rounds} done`);
  }
  const spread = `${settings.subjects / 1000}k`;
  const rows = cases.map(({ id, shape, ...rest }) => ({
    ...rest,
    subjects: shape === 'hot' ? 'hot' : spread,
    opsPerSec: summarize(perCase.get(id)),
  }));
  writeResults('core', { settings, durationMs: Date.now() - started, rows });
}

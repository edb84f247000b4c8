/**
 * Suite 1, core: in-process decisions per second on memory stores. Sluice (every algorithm and a
 * two-policy limiter, through `consume` and through the sync `decide`) beside the memory stores of
 * express-rate-limit, rate-limiter-flexible and @fastify/rate-limit, one hot subject and 100,000
 * subjects round robin, interleaved rounds in one process.
 */
import { createRequire } from 'node:module';
import { createLimiter } from '@sluice/core';
import { MemoryStore as ErlMemoryStore } from 'express-rate-limit';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { progress, SMOKE, writeResults } from '../lib/cli.mjs';
import { throughputRounds } from '../lib/harness.mjs';
import { LIMITER_CASES, subjects, takesLease, UNREACHED } from '../lib/policies.mjs';

const require = createRequire(import.meta.url);
// Not in the package's exports (it has none): the class the plugin counts with in memory.
const FastifyLocalStore = require('@fastify/rate-limit/store/LocalStore.js');

const SUBJECT_COUNT = SMOKE ? 10_000 : 100_000;
const BATCH = 1000;
const settings = SMOKE
  ? { rounds: 1, timeMs: 15, warmupMs: 5, batch: BATCH }
  : { rounds: 3, timeMs: 300, warmupMs: 100, batch: BATCH };

const many = subjects(SUBJECT_COUNT);
const HOT = 'hot-subject';
const WINDOW_MS = 60_000;

/** A loop of BATCH operations over one hot subject or the subjects round robin. */
function loops(op, isAsync) {
  let next = 0;
  const hot = isAsync
    ? async () => {
        for (let i = 0; i < BATCH; i++) await op(HOT);
      }
    : () => {
        for (let i = 0; i < BATCH; i++) op(HOT);
      };
  const spread = isAsync
    ? async () => {
        for (let i = 0; i < BATCH; i++) {
          await op(many[next]);
          if (++next === many.length) next = 0;
        }
      }
    : () => {
        for (let i = 0; i < BATCH; i++) {
          op(many[next]);
          if (++next === many.length) next = 0;
        }
      };
  return { hot, spread };
}

/** Every operation, by implementation; `denied` ones run against a limit the hot subject has used up. */
function operations() {
  const ops = [];
  for (const { label, policies } of LIMITER_CASES) {
    const limiter = createLimiter({ name: label, policies });
    if (takesLease(policies)) {
      // A concurrency decision holds a lease: one operation is take and give back.
      ops.push({
        impl: 'sluice',
        label,
        api: 'consume',
        isAsync: true,
        op: async (s) => (await limiter.consume(s)).release?.(),
      });
      ops.push({
        impl: 'sluice',
        label,
        api: 'decide',
        isAsync: false,
        op: (s) => limiter.decide(s, 1, 'consume').release?.(),
      });
    } else {
      ops.push({ impl: 'sluice', label, api: 'consume', isAsync: true, op: (s) => limiter.consume(s) });
      ops.push({
        impl: 'sluice',
        label,
        api: 'decide',
        isAsync: false,
        op: (s) => limiter.decide(s, 1, 'consume'),
      });
    }
  }
  const erl = new ErlMemoryStore();
  erl.init({ windowMs: WINDOW_MS });
  ops.push({
    impl: 'express-rate-limit',
    label: 'fixed-window',
    api: 'MemoryStore.increment',
    isAsync: true,
    op: (s) => erl.increment(s),
  });
  const rlf = new RateLimiterMemory({ points: UNREACHED, duration: WINDOW_MS / 1000 });
  ops.push({
    impl: 'rate-limiter-flexible',
    label: 'fixed-window',
    api: 'RateLimiterMemory.consume',
    isAsync: true,
    op: (s) => rlf.consume(s),
  });
  // The plugin's default cache holds 5,000 keys; sized to hold every subject, as a user would set it.
  const frl = new FastifyLocalStore(false, false, SUBJECT_COUNT * 2);
  const ignore = () => {};
  ops.push({
    impl: '@fastify/rate-limit',
    label: 'fixed-window',
    api: 'LocalStore.incr',
    isAsync: false,
    op: (s) => frl.incr(s, ignore, WINDOW_MS, UNREACHED),
  });
  return { ops, stop: () => erl.shutdown() };
}

/** The denied path: a hot subject over its limit, every call refused. */
function deniedOperations() {
  const limiter = createLimiter({ name: 'denied', limit: 100, window: '1h' });
  const rlf = new RateLimiterMemory({ points: 100, duration: 3600 });
  const refused = () => {};
  return [
    { impl: 'sluice', label: 'sliding-window', api: 'consume', isAsync: true, op: (s) => limiter.consume(s) },
    {
      impl: 'sluice',
      label: 'sliding-window',
      api: 'decide',
      isAsync: false,
      op: (s) => limiter.decide(s, 1, 'consume'),
    },
    // rate-limiter-flexible refuses by rejecting the promise.
    {
      impl: 'rate-limiter-flexible',
      label: 'fixed-window',
      api: 'RateLimiterMemory.consume',
      isAsync: true,
      op: (s) => rlf.consume(s).catch(refused),
    },
  ];
}

const started = Date.now();
const { ops, stop } = operations();
const denied = deniedOperations();
progress(`core: filling ${SUBJECT_COUNT} subjects per store`);
for (const { op } of ops) for (const s of many) await op(s);
for (const { op } of denied) for (let i = 0; i < 200; i++) await op(HOT);

const tasks = [];
const rows = [];
for (const [path, list] of [
  ['allowed', ops],
  ['denied', denied],
]) {
  for (const entry of list) {
    const { hot, spread } = loops(entry.op, entry.isAsync);
    const shapes = path === 'denied' ? [['hot', hot]] : [['hot', hot], [`${SUBJECT_COUNT / 1000}k`, spread]];
    for (const [subjectsLabel, fn] of shapes) {
      const name = `${path} ${entry.impl} ${entry.label} ${entry.api} ${subjectsLabel}`;
      tasks.push({ name, fn });
      rows.push({ name, path, impl: entry.impl, case: entry.label, api: entry.api, subjects: subjectsLabel });
    }
  }
}
progress(`core: ${tasks.length} cases × ${settings.rounds} rounds of ${settings.timeMs} ms`);
const measured = await throughputRounds(tasks, {
  ...settings,
  onRound: (r) => progress(`core: round ${r + 1}/${settings.rounds} done`),
});
stop();
for (const row of rows) row.opsPerSec = measured.get(row.name);
const file = writeResults('core', {
  settings: { ...settings, subjects: SUBJECT_COUNT },
  durationMs: Date.now() - started,
  rows,
});
progress(`core: wrote ${file}`);
process.exit(0);

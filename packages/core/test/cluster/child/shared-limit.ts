/**
 * One primary and four workers, the app's own messages flowing beside Sluice's:
 * - parity: a worker runs the conformance kit's parity check on ClusterStore, on the primary's clock
 *   (a manual clock the worker sets with an app message before each call: IPC keeps messages in order);
 * - atomicity: the four workers fire bursts at one counter at once, for every algorithm and for pairs
 *   of policies, chattering app messages between their calls;
 * - lookalikes: app messages shaped like Sluice's, but not tagged as Sluice's, charge nothing.
 */
import cluster from 'node:cluster';
import { ClusterStore, createLimiter, type Store } from '@sluice/core';
import {
  atomicityCases,
  type Burst,
  type BurstResult,
  checkStoreParity,
  fireBurst,
  verifyBurst,
} from '@sluice/core/testing';
import { ask, forkWorkers, report, seen, serve } from './app-messages.js';

const WORKERS = 4;
const LIMIT = 400;
/** Per worker and case: twice the limit in all. */
const CALLS = 200;
/** App messages each worker sends per burst, between its calls. */
const CHATTER = 20;

export async function primary(): Promise<void> {
  let manual: number | undefined;
  let chatter = 0;
  cluster.on('message', (_worker, message: { app?: string; now?: number | null }) => {
    if (message?.app === 'clock') manual = message.now ?? undefined;
    if (message?.app === 'chatter') chatter++;
  });
  const store = ClusterStore.primary({ clock: () => manual ?? Date.now() });
  const workers = await forkWorkers(WORKERS);
  const result: Record<string, unknown> = {};
  result.parity = await ask(workers[0]!, 'parity').catch((error: unknown) => ({ error: String(error) }));
  manual = undefined;
  const atomicity: Array<{ label: string; allowed: number; error?: string }> = [];
  for (const [index, testCase] of atomicityCases(LIMIT).entries()) {
    const burst: Burst = {
      policies: testCase.policies,
      prefix: `atomic-${index}`,
      subject: 'hot',
      calls: CALLS,
    };
    const results = await Promise.all(workers.map((w) => ask<BurstResult>(w, 'burst', burst)));
    const after = await ask<Parameters<typeof verifyBurst>[2]>(workers[1]!, 'peek', burst);
    const allowed = results.reduce((sum, r) => sum + r.allowed, 0);
    try {
      verifyBurst(testCase, results, after);
      atomicity.push({ label: testCase.label, allowed });
    } catch (error) {
      atomicity.push({ label: testCase.label, allowed, error: String(error) });
    }
  }
  result.atomicity = atomicity;
  result.lookalike = await ask(workers[2]!, 'lookalike');
  result.echo = await ask(workers[1]!, 'echo');
  result.chatter = chatter;
  result.primarySeen = { ...seen };
  result.workerSeen = await Promise.all(workers.map((w) => ask(w, 'seen')));
  result.limiters = store.limiters;
  report(result);
}

/** The ClusterStore, with the primary's manual clock set to `clock()` before each call. */
function onClock(store: ClusterStore, clock: () => number): Store {
  const setClock = () => process.send!({ app: 'clock', now: clock() });
  return {
    local: false,
    consume: (call) => {
      setClock();
      return store.consume(call);
    },
    refund: (call) => {
      setClock();
      return store.refund(call);
    },
    reset: (limiter, subject) => {
      setClock();
      return store.reset(limiter, subject);
    },
  };
}

export function worker(): void {
  const store = new ClusterStore();
  serve({
    parity: async () => {
      try {
        return await checkStoreParity((clock) => onClock(store, clock), { seeds: [1, 2, 3] });
      } finally {
        process.send!({ app: 'clock', now: null });
      }
    },
    burst: async (args) => {
      const burst = args as Burst;
      const half = { ...burst, calls: burst.calls / 2 };
      const chatter = () => {
        for (let i = 0; i < CHATTER / 2; i++) process.send!({ app: 'chatter', i });
      };
      // Both halves' calls leave at once (fireBurst starts every call before it awaits any), with the
      // app's messages between them.
      const first = fireBurst(store, half);
      chatter();
      const second = fireBurst(store, half);
      chatter();
      const [a, b] = await Promise.all([first, second]);
      return {
        allowed: a.allowed + b.allowed,
        denied: a.denied + b.denied,
        degraded: a.degraded + b.degraded,
        errors: [...a.errors, ...b.errors],
      } satisfies BurstResult;
    },
    peek: async (args) => {
      const { policies, prefix, subject } = args as Burst;
      const limiter = createLimiter({ policies: [...policies], prefix, store, storeTimeout: '30s' });
      return limiter.peek(subject);
    },
    echo: async () => {
      // A generous timeout: past the default 250 ms (a loaded machine) a call was decided in the worker.
      const limiter = createLimiter({ limit: 5, window: '1h', prefix: 'echo', store, storeTimeout: '30s' });
      const decisions = Promise.all([1, 2, 3].map(() => limiter.consume('x')));
      // An app that relays workers' messages to every worker: this one hears requests with the ids of
      // its own calls in flight (ids are per worker), before the primary's answers.
      for (let id = 1; id <= 200_000; id++) {
        process.emit(
          'message',
          { sluice: 'cluster/1', id, op: 'c', lim: 1, sub: 'x', n: 1, lease: 0 },
          undefined,
        );
      }
      return (await decisions).map((d) => [d.allowed, d.remaining, d.degraded === true]);
    },
    lookalike: async () => {
      const limiter = createLimiter({
        limit: 1,
        window: '1h',
        prefix: 'lookalike',
        store,
        storeTimeout: '30s',
      });
      // What a request of this limiter looks like, without the tag (and with a wrong one).
      const def = {
        prefix: 'lookalike',
        name: 'default',
        global: false,
        policies: [['sliding-window', 1, 3_600_000, 1, 0, 'lookalike:default:1-per-1h:sw']],
      };
      const call = { id: 1, op: 'c', lim: 1, def, sub: 'x', n: 1, lease: 0 };
      process.send!(call);
      process.send!({ ...call, sluice: 'cluster/0' });
      process.send!({ ...call, sluice: true });
      const decision = await limiter.consume('x');
      return {
        allowed: decision.allowed,
        remaining: decision.remaining,
        degraded: decision.degraded === true,
      };
    },
    seen: () => ({ ...seen }),
  });
}

/**
 * A rolling restart: workers of this release forked by a primary still running the release before
 * batching, which answers each call that comes as a message of its own and ignores a `Calls` (it has
 * no id). The primary here is a stand-in for that release, written from its protocol: the workers must
 * keep sending each call alone, and every call is decided by the primary, none by onStoreError.
 */
import cluster from 'node:cluster';
import { ClusterStore, createLimiter, MemoryStore } from '@sluice/core';
import { encodeSteps, rebuildLimiter } from '../../../src/stores/cluster/protocol.js';
import type { StoreLimiter } from '../../../src/stores/store.js';
import { ask, forkWorkers, report, serve } from './app-messages.js';

/** Calls made in one turn, twice over. */
const BURST = 64;

export async function primary(): Promise<void> {
  const store = new MemoryStore();
  const limiters = new Map<string, StoreLimiter>();
  const received = { calls: 0, ignored: 0 };
  cluster.on('message', (worker, message: unknown) => {
    if (!ClusterStore.isMessage(message)) return;
    const { id, op, lim, def, sub, n, lease } = message as {
      id?: number;
      op: string;
      lim: number;
      def?: unknown;
      sub: string;
      n: number;
      lease: number;
    };
    if (typeof id !== 'number') {
      received.ignored++;
      return;
    }
    received.calls++;
    const key = `${worker.id}:${lim}`;
    if (def !== undefined && !limiters.has(key)) limiters.set(key, rebuildLimiter(def)!);
    const limiter = limiters.get(key)!;
    const mode = op === 'c' ? 'consume' : 'peek';
    const outcome = store.consume({ limiter, subject: sub, cost: n, leaseId: lease, mode });
    worker.send({ sluice: 'cluster/1', id, now: outcome.now, steps: encodeSteps(outcome.steps) });
  });
  const [worker] = await forkWorkers(1);
  const bursts = [];
  for (let i = 0; i < 2; i++) bursts.push(await ask(worker!, 'burst'));
  report({ bursts, received });
}

export function worker(): void {
  const limiter = createLimiter({
    name: 'api',
    limit: 1000,
    window: '1h',
    algorithm: 'fixed-window',
    store: new ClusterStore(),
    // A call left unanswered is decided by onStoreError, and shows as degraded.
    storeTimeout: '2s',
    onStoreError: 'deny',
  });
  serve({
    burst: async () => {
      const decisions = await Promise.all(Array.from({ length: BURST }, () => limiter.consume('x')));
      return decisions.map((d) => [d.allowed, d.remaining, d.degraded === true]);
    },
  });
}

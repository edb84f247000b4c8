/**
 * A primary whose event loop is blocked for 1.5 s while a worker's calls wait in the pipe: the worker
 * decides them by onStoreError within storeTimeout, and when the primary gets to them nothing stays
 * charged. Calls the worker gave up (its store's `timeout` passed) are not run at all; calls answered
 * late but still awaited are run and given back by the limiter.
 */
import cluster from 'node:cluster';
import { ClusterStore, createLimiter, type Limiter } from '@sluice/core';
import { ask, forkWorkers, report, serve } from './app-messages.js';

const BLOCK_MS = 1500;
const CALLS = 5;

export async function primary(): Promise<void> {
  ClusterStore.primary();
  const [worker] = await forkWorkers(1);
  // The worker learns from this answer that the primary reads a turn's calls as one message.
  await ask(worker!, 'warm');
  /** The most calls one message of the worker carried: the ten of `fire` travel, and are late, together. */
  let together = 0;
  cluster.on('message', (_worker, message: { calls?: unknown[] }) => {
    if (ClusterStore.isMessage(message)) together = Math.max(together, message.calls?.length ?? 1);
  });
  const fired = ask(worker!, 'fire');
  // Blocks once the worker has been asked, before its calls (sent 100 ms later) can be read.
  setTimeout(() => {
    const until = performance.now() + BLOCK_MS;
    while (performance.now() < until) {
      // Busy: the primary's event loop reads nothing meanwhile.
    }
  }, 20);
  const decisions = await fired;
  report({ decisions, after: await ask(worker!, 'check'), together });
}

export function worker(): void {
  const stores = {
    // Gives its calls up after 300 ms: the primary reads them later, and must not run them.
    givenUp: new ClusterStore({ timeout: 300 }),
    // Waits 10 s: the late answers arrive, and the limiter gives back what they charged.
    awaited: new ClusterStore({ timeout: '10s' }),
  };
  const limiterOn = (name: keyof typeof stores, storeTimeout: number): Limiter =>
    createLimiter({ limit: 10, window: '1h', name, store: stores[name], storeTimeout });
  serve({
    // A peek of another subject: charges nothing.
    warm: async () => (await limiterOn('awaited', 5000).peek('warm')).degraded,
    fire: async () => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const limiters = [limiterOn('givenUp', 100), limiterOn('awaited', 100)];
      const all = await Promise.all(
        limiters.flatMap((l) => Array.from({ length: CALLS }, () => l.consume('x'))),
      );
      return all.map((d) => ({ allowed: d.allowed, degraded: d.degraded === true }));
    },
    check: async () => {
      // The primary is answering again: let late answers and their give-backs arrive.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const seen: Record<string, number> = {};
      for (const name of ['givenUp', 'awaited'] as const) {
        const peek = await limiterOn(name, 5000).peek('x');
        seen[name] = peek.degraded ? -1 : peek.remaining;
      }
      return { remaining: seen, pending: stores.givenUp.pending };
    },
  });
}

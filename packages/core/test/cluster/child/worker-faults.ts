/**
 * A worker killed with SIGKILL while thousands of its calls are in flight, and a new worker forked in
 * its place: the primary keeps answering, forgets the dead worker's limiters, and the counter the dead
 * worker charged is the one the survivor and the new worker see.
 */
import cluster from 'node:cluster';
import { ClusterStore, createLimiter } from '@sluice/core';
import { ask, forkOne, forkWorkers, report, serve } from './app-messages.js';

const LIMIT = 1000;
const IN_FLIGHT = 3000;

function limiterOf(store: ClusterStore) {
  return createLimiter({
    policies: [
      { limit: LIMIT, window: '1h', algorithm: 'fixed-window' },
      { limit: LIMIT * 2, window: '1h', algorithm: 'token-bucket' },
    ],
    prefix: 'faults',
    store,
    storeTimeout: '10s',
  });
}

export async function primary(): Promise<void> {
  const store = ClusterStore.primary();
  let errors = 0;
  process.on('uncaughtException', () => errors++);
  const [victim, survivor] = await forkWorkers(2);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    victim!.once('exit', (code, signal) => resolve({ code, signal })),
  );
  // Never answered: the victim dies while its calls are in flight.
  void ask(victim!, 'dieMidCall').catch(() => {});
  const exit = await exited;
  const limitersAfterExit = store.limiters;
  const survivorSaw = await ask<{ allowed: boolean; remaining: number; degraded: boolean }>(
    survivor!,
    'consume',
  );
  const restarted = await forkOne();
  const restartedSaw = await ask<{ allowed: boolean; remaining: number; degraded: boolean }>(
    restarted,
    'consume',
  );
  report({
    exit,
    limitersAfterExit,
    survivorSaw,
    restartedSaw,
    limiters: store.limiters,
    workers: Object.keys(cluster.workers ?? {}).length,
    errors,
  });
}

export function worker(): void {
  const store = new ClusterStore();
  const limiter = limiterOf(store);
  serve({
    dieMidCall: async () => {
      let answered = 0;
      for (let i = 0; i < IN_FLIGHT; i++) {
        // Over many turns: the calls of one turn travel (and are charged) together.
        if (i % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
        void limiter.consume('shared').then(() => {
          // Dies on the first answer: the primary is busy with the rest, and answers a dead worker.
          if (++answered === 1) process.kill(process.pid, 'SIGKILL');
        });
      }
      return new Promise(() => {});
    },
    consume: async () => {
      const d = await limiter.consume('shared');
      return { allowed: d.allowed, remaining: d.remaining, degraded: d.degraded === true };
    },
  });
}

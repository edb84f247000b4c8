/**
 * The calls of one turn of a worker's event loop travel to the primary as one IPC message and come
 * back as one, counted by the app's listeners on both ends of a real channel; they are decided in the
 * order they were made, and two policies stay all-or-nothing inside one message.
 */
import cluster from 'node:cluster';
import { ClusterStore, createLimiter } from '@sluice/core';
import { ask, forkWorkers, report, seen, serve } from './app-messages.js';

/** Calls made in one turn. */
const BURST = 64;

interface Burst {
  decisions: Array<[boolean, number]>;
  /** The worker's Sluice messages received, and the answers they carried, during the burst. */
  received: { messages: number; answers: number };
}

export async function primary(): Promise<void> {
  ClusterStore.primary();
  // Only the message carries the tag: each call inside a `Calls` would spend a fifth of its bytes on it.
  let taggedInside = 0;
  cluster.on('message', (_worker, message: { calls?: object[] }) => {
    for (const call of (ClusterStore.isMessage(message) && message.calls) || []) {
      if (ClusterStore.isMessage(call)) taggedInside++;
    }
  });
  const [worker] = await forkWorkers(1);
  // The first answer tells the worker that this primary reads a turn's calls as one message.
  const first = await ask<Array<[boolean, number]>>(worker!, 'first');
  const result: Record<string, unknown> = { first };
  for (const name of ['one', 'two'] as const) {
    const before = { ...seen };
    const burst = await ask<Burst>(worker!, 'burst', name);
    result[name] = {
      ...burst,
      sent: { messages: seen.sluiceMessages - before.sluiceMessages, calls: seen.sluice - before.sluice },
    };
  }
  result.wide = await ask(worker!, 'wide');
  result.taggedInside = taggedInside;
  report(result);
}

export function worker(): void {
  const store = new ClusterStore();
  const limiters = {
    one: createLimiter({ name: 'one', limit: 100, window: '1h', algorithm: 'fixed-window', store }),
    // The narrow policy denies from the 11th call on: the wide one must not be charged for those.
    two: createLimiter({
      name: 'two',
      store,
      policies: [
        { limit: 10, window: '1h', algorithm: 'fixed-window' },
        { limit: 1000, window: '1h', algorithm: 'sliding-log' },
      ],
    }),
  };
  serve({
    first: async () => {
      const decisions = [];
      for (const limiter of Object.values(limiters)) decisions.push(await limiter.consume('x'));
      return decisions.map((d) => [d.allowed, d.remaining]);
    },
    burst: async (name) => {
      const limiter = limiters[name as keyof typeof limiters];
      const before = { ...seen };
      const decisions = await Promise.all(Array.from({ length: BURST }, () => limiter.consume('x')));
      const received = {
        messages: seen.sluiceMessages - before.sluiceMessages,
        answers: seen.sluice - before.sluice,
        taggedInside: seen.taggedInside - before.taggedInside,
      };
      return {
        decisions: decisions.map((d) => [d.allowed, d.remaining] as [boolean, number]),
        received,
        degraded: decisions.some((d) => d.degraded === true),
      };
    },
    // The wide policy of `two`: what the bursts left of it (charged for allowed calls only).
    wide: async () => (await limiters.two.peek('x')).policies.at(-1)?.remaining,
  });
}

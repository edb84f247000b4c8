/**
 * A limiter in the primary on `ClusterStore.primary().store` (docs/stores.md: "the shared MemoryStore,
 * for a limiter in the primary process") beside a worker's limiter of the same name: per subject, how
 * the primary sees what the worker spent, and whether the primary's reset frees the worker.
 */
import { ClusterStore, createLimiter } from '@sluice/core';
import { ask, forkWorkers, report, serve } from './app-messages.js';

const OPTIONS = { name: 'api', limit: 2, window: '1h' } as const;
export const SUBJECTS = ['id:user-42', 'id:Jane Doe', 'id:order#7', 'id:José', `id:${'x'.repeat(80)}`];

export async function primary(): Promise<void> {
  const { store } = ClusterStore.primary();
  const limiter = createLimiter({ ...OPTIONS, store });
  const [worker] = await forkWorkers(1);
  const result: Record<string, unknown> = {};
  for (const subject of SUBJECTS) {
    await ask(worker!, 'consume', subject);
    await ask(worker!, 'consume', subject);
    const seenByPrimary = (await limiter.peek(subject)).allowed;
    await limiter.reset(subject);
    const workerAfterReset = await ask<boolean>(worker!, 'consume', subject);
    result[subject] = {
      primaryAllowsAfterWorkerSpentAll: seenByPrimary,
      workerAllowedAfterReset: workerAfterReset,
    };
  }
  report(result);
}

export function worker(): void {
  const limiter = createLimiter({ ...OPTIONS, store: new ClusterStore(), storeTimeout: '30s' });
  serve({ consume: async (subject) => (await limiter.consume(subject as string)).allowed });
}

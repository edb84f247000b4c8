/**
 * A primary that never started ClusterStore.primary(): it has its own IPC listener and ignores
 * Sluice's messages, so no call is ever answered. A worker's limiters follow onStoreError within
 * storeTimeout, report store errors as 'cluster', open the circuit, and the store forgets its calls
 * after its own `timeout`.
 */
import { subscribe } from 'node:diagnostics_channel';
import { ClusterStore, createLimiter, type OnStoreError, type StoreErrorMessage } from '@sluice/core';
import { ask, forkWorkers, report, serve } from './app-messages.js';

const STORE_TIMEOUT_MS = 100;
/** The store's own bound on a call nobody answers. */
const ABANDON_MS = 300;

export async function primary(): Promise<void> {
  const [worker] = await forkWorkers(1);
  report(await ask(worker!, 'run'));
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await run();
  return { value, ms: Math.round(performance.now() - start) };
}

export function worker(): void {
  const storeErrors: StoreErrorMessage[] = [];
  subscribe('sluice:store-error', (message) => storeErrors.push(message as StoreErrorMessage));
  serve({
    run: async () => {
      const modes: Record<string, unknown> = {};
      for (const mode of ['local', 'allow', 'deny'] as OnStoreError[]) {
        const store = new ClusterStore({ timeout: ABANDON_MS });
        const limiter = createLimiter({
          limit: 1,
          window: '1m',
          name: mode,
          store,
          onStoreError: mode,
          storeTimeout: STORE_TIMEOUT_MS,
        });
        const { value: d, ms } = await timed(() => limiter.consume('x'));
        const reset = await timed(() => limiter.reset('x'));
        modes[mode] = {
          allowed: d.allowed,
          degraded: d.degraded,
          reason: d.reason ?? null,
          ms,
          resetMs: reset.ms,
        };
      }
      // Five failures in a row open the circuit: the sixth call does not reach the store.
      const store = new ClusterStore({ timeout: ABANDON_MS });
      const limiter = createLimiter({
        limit: 5,
        window: '1m',
        name: 'circuit',
        store,
        storeTimeout: STORE_TIMEOUT_MS,
      });
      for (let i = 0; i < 5; i++) await limiter.consume('y');
      const pendingBefore = store.pending;
      const sixth = await timed(() => limiter.consume('y'));
      const pendingAfterSixth = store.pending;
      await new Promise((resolve) => setTimeout(resolve, ABANDON_MS + 200));
      return {
        modes,
        circuit: { ms: sixth.ms, degraded: sixth.value.degraded, pendingBefore, pendingAfterSixth },
        pendingAtEnd: store.pending,
        storeErrors: storeErrors.map(({ store, timeout, limiter }) => ({ store, timeout, limiter })),
      };
    },
  });
}

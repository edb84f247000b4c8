/** Fastify 5 and Fastify 4 (the `fastify4` alias), typed alike so one suite runs on both. */
import fastify5 from 'fastify';
import fastify4 from 'fastify4';
import type { Store } from '@sluice/core';
import { type ManualClock, manualClock } from '@sluice/core/testing';

export type MakeApp = typeof fastify5;

export const frameworks: [string, MakeApp][] = [
  ['Fastify 5', fastify5],
  ['Fastify 4', fastify4 as unknown as MakeApp],
];

/** A manual clock at a whole day since the epoch: fixed windows start exactly at it. */
export function alignedClock(): ManualClock {
  return manualClock(1_699_920_000_000);
}

/** A store that runs `inner` and records the limiter names it was called for and the refunds. */
export function recording(inner: Store): Store & { names: string[]; refunds: number } {
  const spy = {
    local: inner.local,
    names: [] as string[],
    refunds: 0,
    consume: (call: Parameters<Store['consume']>[0]) => {
      spy.names.push(decodeURIComponent(call.limiter.name));
      return inner.consume(call);
    },
    refund: (call: Parameters<Store['refund']>[0]) => {
      spy.refunds++;
      return inner.refund(call);
    },
    reset: (...args: Parameters<Store['reset']>) => inner.reset(...args),
  };
  return spy;
}

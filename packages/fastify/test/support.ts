/** Test support: both Fastify majors, an aligned clock, a recording store, the shared header-table runner. */

import type { Store } from '@sluice/core';
import { type ManualClock, manualClock } from '@sluice/core/testing';
import sluice, { type SluiceFastifyOptions } from '@sluice/fastify';
import type { HeaderCase } from '../../../test/fixtures/header-cases.js';
import type { MakeApp } from './frameworks.js';

export { frameworks, type MakeApp } from './frameworks.js';

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

/** Runs one case of the shared table: `c.requests` identical requests, the last answer checked. */
export async function checkHeaderCase(
  makeApp: MakeApp,
  c: HeaderCase,
  store: Store,
  extra: SluiceFastifyOptions = {},
) {
  const app = makeApp();
  try {
    await app.register(sluice, { ...c.options, ...extra, store } as SluiceFastifyOptions);
    app.get('/', async () => 'ok');
    let last: Awaited<ReturnType<typeof app.inject>> | undefined;
    for (let i = 0; i < c.requests; i++) last = await app.inject({ method: 'GET', url: '/' });
    expect(last!.statusCode).toBe(c.status);
    for (const [name, expected] of Object.entries(c.headers)) {
      const actual = last!.headers[name];
      if (expected === null) expect(actual).toBeUndefined();
      else if (expected instanceof RegExp) expect(String(actual)).toMatch(expected);
      else expect(actual).toBe(expected);
    }
    if (c.body !== undefined) expect(last!.json()).toMatchObject(c.body);
  } finally {
    await app.close();
  }
}

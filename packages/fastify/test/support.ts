/** Test support: both Fastify majors, an aligned clock, a recording store, the shared header-table runner. */

import type { Store } from '@sluice/core';
import { type ManualClock, manualClock } from '@sluice/core/testing';
import sluice, { type SluiceFastifyOptions } from '@sluice/fastify';
import { expectHeaderCase, type HeaderCase } from '../../../test/fixtures/header-cases.js';
import type { MakeApp } from './frameworks.js';

export { failingStore, recording } from '../../../test/fixtures/stores.js';
export { frameworks, type MakeApp } from './frameworks.js';

/** A manual clock at a whole day since the epoch: fixed windows start exactly at it. */
export function alignedClock(): ManualClock {
  return manualClock(1_699_920_000_000);
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
    expectHeaderCase(c, { status: last!.statusCode, headers: last!.headers, body: last!.body });
  } finally {
    await app.close();
  }
}

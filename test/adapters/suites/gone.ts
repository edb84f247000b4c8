import { MemoryStore } from '@sluice/core';
import { stillStore } from '../../support/clock.js';
import { recordWarnings } from '../../support/warnings.js';
import type { Framework } from '../framework.js';
import { abandon, recording, serving, statuses, tick } from '../support.js';

/**
 * Clients that reset their connection before the limiter runs (API.md r3, the `subject` row): Node
 * then forgets the socket's address, so such a request used to be charged to the shared `ip:unknown`
 * and its handler run all the same, beside the client's own limit (6cc09fa: 4 handlers in flight under
 * a concurrency limit of 2, on every framework). Now it is charged nothing and never reaches the
 * handler, whether the limiter decides in process or after a promise, and it is no missing address.
 */
export function goneClients(framework: Framework): void {
  const start = serving(framework);
  const { codes } = recordWarnings();
  /** Resets `count` requests on their own connections `afterMs` after sending them. */
  const resets = (port: number, count: number, afterMs: number) =>
    Promise.all(Array.from({ length: count }, () => abandon({ port } as never, '/', afterMs)));

  const paths = [
    // Something asynchronous before the limiter (a body parser), and a limiter that decides in process.
    ['in process, after asynchronous middleware', {}, { beforeMs: 120 }],
    // A subject callback that awaits (a session lookup): the decision comes after a promise.
    ['after an asynchronous subject callback', { subject: () => tick(120).then(() => undefined) }, {}],
  ] as const;

  // One request first, so that nothing the first request loads holds the event loop past `beforeMs`
  // (timers run before the socket's close is read then, and the client is not yet known to be gone).
  test.each(paths)('%s: charged nothing, no handler runs', async (_, extra, settings) => {
    const store = recording(new MemoryStore());
    const app = await start({ limit: 2, window: '1m', algorithm: 'concurrency', store, ...extra }, settings);
    expect(await statuses(app, 1, '/ok')).toEqual([200]);
    await resets(app.port, 6, 20);
    await tick(300);
    expect(app.control.reached).toHaveLength(0);
    expect(store.names).toHaveLength(1);
    expect(codes).toEqual([]);
  });

  test('a rate limit: resets spend nothing of the client that stays', async () => {
    const store = recording(stillStore()); // a window that rolled over midway would start the count again
    const app = await start({ limit: 3, window: '1m', algorithm: 'fixed-window', store }, { beforeMs: 120 });
    expect(await statuses(app, 1, '/ok')).toEqual([200]);
    await resets(app.port, 5, 20);
    await tick(300);
    expect(app.control.reached).toHaveLength(0);
    expect(await statuses(app, 3)).toEqual([200, 200, 429]);
    expect(store.names).toHaveLength(4);
  });
}

import { connect } from 'node:net';
import { MemoryStore } from '@sluice/core';
import { stillStore } from '../../support/clock.js';
import { recordWarnings } from '../../support/warnings.js';
import type { Framework } from '../framework.js';
import { abandon, recording, serving, slowStore, statuses, tick, until } from '../support.js';

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
    Promise.all(Array.from({ length: count }, () => abandon({ port }, '/', afterMs, true)));

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

  /** `count` GETs of `path` on one connection (HTTP pipelining), reset `afterMs` later. */
  const pipelined = (port: number, count: number, path: string, afterMs: number) =>
    new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`.repeat(count));
        setTimeout(() => {
          socket.resetAndDestroy();
          resolve();
        }, afterMs);
      });
      socket.on('error', () => resolve());
    });

  // Found by the review of 4b6ee91: a response queued behind another on its connection never emits
  // 'close' when the client resets (its request does), so its lease stayed out for the whole window.
  test('requests pipelined on one connection, then a reset: every lease comes back', async () => {
    const store = recording(new MemoryStore());
    const app = await start({ limit: 3, window: '1h', algorithm: 'concurrency', store });
    app.control.work = () => tick(150);
    await pipelined(app.port, 3, '/work', 50);
    await until(() => store.names.length === 3);
    await until(() => store.refunds === 3, 3000);
    expect(await statuses(app, 1, '/ok')).toEqual([200]);
  });

  // Likewise a queued request whose client reset while a remote store decided it: it has no socket of
  // its own to tell, and reached the handler with its charge.
  test('requests pipelined behind a slow store, then a reset: no handler runs, every charge comes back', async () => {
    const inner = recording(new MemoryStore());
    // The store answers well after the reset: a loaded machine may take a while to read it.
    const slow = slowStore(inner, () => tick(400));
    const app = await start({
      limit: 5,
      window: '1h',
      algorithm: 'concurrency',
      store: slow,
      storeTimeout: '5s',
    });
    await pipelined(app.port, 3, '/', 20);
    await tick(700);
    expect(app.control.reached).toHaveLength(0);
    expect(inner.refunds).toBe(inner.names.length);
  });

  // Found by the same review: a reset that Node has not yet handled leaves a socket not destroyed but
  // with no peer address, so the request went to the shared ip:unknown, reached the handler, and three
  // of them warned ERR_SLUICE_NO_CLIENT_ADDRESS on a correct setup.
  test('a reset racing the limiter: no handler runs, nothing warned', async () => {
    const app = await start({ limit: 1, window: '1h', algorithm: 'fixed-window' });
    expect(await statuses(app, 1, '/ok')).toEqual([200]);
    for (let i = 0; i < 200; i++) {
      await new Promise<void>((resolve) => {
        const socket = connect(app.port, '127.0.0.1', () => {
          socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
          setImmediate(() => {
            socket.resetAndDestroy();
            resolve();
          });
        });
        socket.on('error', () => resolve());
      });
    }
    await tick(200);
    expect(app.control.reached).toHaveLength(0);
    expect(codes).toEqual([]);
  });
}

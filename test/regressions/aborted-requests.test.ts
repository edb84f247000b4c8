import type { SharedOptions } from '../adapters/frameworks.js';
import { eachFramework } from '../adapters/frameworks.js';
import { serving, until } from '../adapters/support.js';
import { hangUps, probe as newProbe, type Probe, work } from '../support/aborting-clients.js';
import { stillStore } from '../support/clock.js';

// With a concurrency limit of 2, 20 requests whose clients disconnected after 30 ms started 20
// handlers, all running at once (the lease was released on 'close'); with skipFailedRequests, aborted
// requests were refunded, so a client aborting every request ran the handler without limit. A lease
// now ends when the handler ends the response, and a client that leaves first gets no refund.
// Failed on 13f5928.

const WORK_MS = 300;
/**
 * The refund case needs every client gone before its handler ends: a handler that ended first would
 * be answered, and rightly refunded. Long, so a loaded machine cannot turn the order round.
 */
const LONG_WORK_MS = 1500;

describe.each(eachFramework)('%s: clients that abort', (_name, framework) => {
  const serve = serving(framework);
  const start = async (options: SharedOptions, probe: Probe, workMs: number | Promise<void> = WORK_MS) => {
    const app = await serve(options);
    app.control.work = () => work(probe, workMs);
    return app;
  };

  it('never run more handlers at once than the concurrency limit', async () => {
    const probe = newProbe();
    // The handlers work until the test lets them end: with 300 ms of work, a loaded machine took longer
    // over the 20 clients, and handlers that ended rightly let others in (5 ran, of at most 4).
    let end = () => {};
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    const server = await start({ limit: 2, window: '1m', algorithm: 'concurrency' }, probe, ended);
    // 20 clients, two at a time, each leaving after 30 ms while its handler works on.
    for (let i = 0; i < 10; i++) await hangUps(server.port, 2, 30, '/work');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(probe.most).toBe(2);
    expect(probe.ran).toBe(2);
    // Their handlers ended: the leases are back.
    end();
    await until(() => probe.inFlight === 0);
    // Clients that stay until their handlers ran (one gone before its decision is never passed on).
    await hangUps(server.port, 2, 1000, '/work');
    expect(probe.ran).toBeGreaterThan(2);
  });

  it('get no refund from skipFailedRequests, however the handler ends', async () => {
    const probe = newProbe();
    const options = {
      limit: 3,
      window: '1m',
      algorithm: 'fixed-window',
      skipFailedRequests: true,
      store: stillStore(), // a window that rolled over midway would admit three more
    } as const;
    const server = await start(options, probe, LONG_WORK_MS);
    for (let i = 0; i < 3; i++) await hangUps(server.port, 3, 30, '/work');
    await new Promise((resolve) => setTimeout(resolve, LONG_WORK_MS + 100));
    expect(probe.ran).toBe(3);
  });
});

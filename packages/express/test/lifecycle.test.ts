import type { Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { MemoryStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import type { Express, Response } from 'express';
import request from 'supertest';
import { recording } from '../../../test/fixtures/stores.js';
import { expressVersions, tick, until } from './support.js';

function listen(app: Express): Promise<Server> {
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** Sends a GET on a raw socket and destroys it after `afterMs`: a client that goes away. */
function abandon(server: Server, path: string, afterMs: number): Promise<void> {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
      setTimeout(() => {
        socket.destroy();
        resolve();
      }, afterMs);
    });
  });
}

/**
 * Once the first lease is back, `/fast` is admitted; in all, one release per admitted request (the
 * first and that `/fast`), never two for one.
 */
async function expectReleasedOnceEach(server: Server, store: { refunds: number }): Promise<void> {
  await until(() => store.refunds === 1);
  expect((await request(server).get('/fast')).status).toBe(200);
  await tick(20);
  expect(store.refunds).toBe(2);
}

describe.each(expressVersions)('%s: holding, releasing', (_, makeApp) => {
  test('leaky bucket with delay: requests reach the route one slot apart', async () => {
    const app = makeApp();
    const reached: number[] = [];
    // A still clock: the slots are exact whatever the requests' own timing.
    const store = new MemoryStore({ clock: () => 1_700_000_000_000 });
    app.use(rateLimiter({ limit: 10, window: '1s', algorithm: 'leaky-bucket', burst: 3, store }));
    app.get('/', (req, res) => {
      reached.push(Date.now());
      res.json({ delayMs: req.rateLimit?.delayMs });
    });
    const server = await listen(app);
    try {
      const start = Date.now();
      const answers = await Promise.all([0, 1, 2, 3].map(() => request(server).get('/')));
      const delays = answers.filter((r) => r.status === 200).map((r) => r.body.delayMs as number);
      expect(delays.sort((a, b) => a - b)).toEqual([0, 100, 200]);
      expect(answers.filter((r) => r.status === 429)).toHaveLength(1);
      // The last admitted request waited for its slot before the route ran (timer slack allowed).
      expect(Math.max(...reached) - start).toBeGreaterThanOrEqual(190);
    } finally {
      server.close();
    }
  });

  test('a client that disconnects while held is not passed on', async () => {
    const app = makeApp();
    let reached = 0;
    const limiter = rateLimiter({ limit: 4, window: '1s', algorithm: 'leaky-bucket', burst: 2 });
    app.use(limiter);
    app.get('/', (_req, res) => {
      reached++;
      res.send('ok');
    });
    const server = await listen(app);
    try {
      expect((await request(server).get('/')).status).toBe(200); // takes the slot now
      await abandon(server, '/', 50); // held for 250 ms, gone after 50
      await tick(400);
      expect(reached).toBe(1);
    } finally {
      server.close();
    }
  });

  test('a concurrency lease is released once when the response finishes', async () => {
    const store = recording(new MemoryStore());
    const app = makeApp();
    let open: (() => void) | undefined;
    app.use(rateLimiter({ limit: 1, window: '1m', algorithm: 'concurrency', store }));
    app.get('/slow', (_req, res) => {
      open = () => res.send('done');
    });
    app.get('/fast', (_req, res) => {
      res.send('fast');
    });
    const server = await listen(app);
    try {
      const slow = request(server)
        .get('/slow')
        .then((r) => r.status);
      await until(() => open !== undefined);
      expect((await request(server).get('/fast')).status).toBe(429);
      open!();
      expect(await slow).toBe(200);
      await expectReleasedOnceEach(server, store);
    } finally {
      server.close();
    }
  });

  test('a client that aborts keeps its lease until the handler ends the response', async () => {
    const store = recording(new MemoryStore());
    const app = makeApp();
    const held: Response[] = [];
    app.use(rateLimiter({ limit: 1, window: '1m', algorithm: 'concurrency', store }));
    app.get('/hang', (_req, res) => {
      held.push(res); // answers only when the test says so
    });
    app.get('/fast', (_req, res) => {
      res.send('fast');
    });
    const server = await listen(app);
    try {
      await abandon(server, '/hang', 50);
      await tick(20);
      expect(held).toHaveLength(1);
      // The handler still runs after its client left: no second one starts.
      expect((await request(server).get('/fast')).status).toBe(429);
      expect(store.refunds).toBe(0);
      held[0]!.send('late'); // ends the response on a dead socket
      await expectReleasedOnceEach(server, store);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  test('skipFailedRequests gives nothing back for a request whose client left, whatever the handler answers', async () => {
    const app = makeApp();
    const held: Response[] = [];
    app.use(rateLimiter({ limit: 1, window: '1m', algorithm: 'fixed-window', skipFailedRequests: true }));
    app.get('/hang', (_req, res) => {
      held.push(res);
    });
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    const server = await listen(app);
    try {
      await abandon(server, '/hang', 50);
      await tick(20);
      held[0]!.status(500).send('failed late');
      await tick(20);
      expect((await request(server).get('/')).status).toBe(429);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

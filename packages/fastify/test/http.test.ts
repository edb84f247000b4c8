import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryStore } from '@sluice/core';
import sluice from '@sluice/fastify';
import type { FastifyInstance } from 'fastify';
import { alignedClock, frameworks, type MakeApp, recording } from './support.js';

/** Answers of a real HTTP request (no keep-alive, so closing the app never waits on a socket). */
function send(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): { done: Promise<{ status: number; headers: Record<string, unknown>; body: string }>; abort: () => void } {
  const req = httpRequest({ host: '127.0.0.1', port, path, headers, agent: false });
  const done = new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
    (resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
    },
  );
  req.end();
  return { done, abort: () => req.destroy() };
}

/** Polls `check` every 10 ms, up to 2 s. */
async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not reached in 2 s');
}

describe.each(frameworks)('%s over real HTTP on 127.0.0.1', (_, makeApp: MakeApp) => {
  let app: FastifyInstance;
  afterEach(async () => {
    await app.close();
  });

  async function listen(
    setup: (app: FastifyInstance) => Promise<void> | void,
    trustProxy = false,
  ): Promise<number> {
    app = makeApp({ trustProxy });
    await setup(app);
    await app.listen({ host: '127.0.0.1', port: 0 });
    return (app.server.address() as AddressInfo).port;
  }

  test('429 with Retry-After, RateLimit fields and a problem+json body', async () => {
    const port = await listen(async (a) => {
      await a.register(sluice, {
        limit: 1,
        window: '1m',
        algorithm: 'fixed-window',
        store: new MemoryStore({ clock: () => 1_699_920_000_000 }),
      });
      a.get('/', async () => 'ok');
    });
    const first = await send(port, '/').done;
    expect(first.status).toBe(200);
    expect(first.headers.ratelimit).toBe('"1-per-1m";r=0;t=60');
    const denied = await send(port, '/').done;
    expect(denied.status).toBe(429);
    expect(denied.headers['retry-after']).toBe('60');
    expect(denied.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(denied.body)).toMatchObject({ status: 429, policy: '1-per-1m', retryAfter: 60 });
  });

  test.each([false, true])(
    'trustProxy %s decides whether X-Forwarded-For is the client',
    async (trustProxy) => {
      const port = await listen(async (a) => {
        await a.register(sluice, { limit: 1, window: '1m' });
        a.get('/', async () => 'ok');
      }, trustProxy);
      const first = await send(port, '/', { 'x-forwarded-for': '1.1.1.1' }).done;
      const second = await send(port, '/', { 'x-forwarded-for': '2.2.2.2' }).done;
      expect([first.status, second.status]).toEqual(trustProxy ? [200, 200] : [200, 429]);
    },
  );

  /**
   * A leaky bucket (with delay) of 1 per `window` holding `burst`, whose route calls `reached`. The
   * store's clock stands still, so each request's slot is exactly one interval after the one before.
   */
  function leakyBucket(window: string, burst: number, reached: () => void): Promise<number> {
    return listen(async (a) => {
      await a.register(sluice, {
        limit: 1,
        window,
        burst,
        algorithm: 'leaky-bucket',
        store: new MemoryStore({ clock: alignedClock() }),
      });
      a.get('/', async () => {
        reached();
        return 'ok';
      });
    });
  }

  test('leaky bucket with delay holds a request for its slot', async () => {
    const reached: number[] = [];
    const port = await leakyBucket('300ms', 3, () => reached.push(Date.now()));
    const started = Date.now();
    const first = await send(port, '/').done;
    const second = await send(port, '/').done;
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(reached[1]! - started).toBeGreaterThanOrEqual(290);
  });

  test('a client that disconnects while held is not passed on', async () => {
    let reached = 0;
    const port = await leakyBucket('400ms', 2, () => reached++);
    await send(port, '/').done;
    const held = send(port, '/');
    held.done.catch(() => {});
    await new Promise((r) => setTimeout(r, 50));
    held.abort();
    await new Promise((r) => setTimeout(r, 500));
    expect(reached).toBe(1);
  });

  /** A concurrency limit of 1: `/slow` holds its lease until `open()`, `/fast` answers at once. */
  async function leaseApp() {
    const store = recording(new MemoryStore({ clock: alignedClock() }));
    let open: () => void = () => {};
    const gate = new Promise<void>((r) => {
      open = r;
    });
    let allowed = 0;
    const port = await listen(async (a) => {
      await a.register(sluice, {
        limit: 1,
        window: '1m',
        algorithm: 'concurrency',
        store,
        onDecision: (_r, d) => {
          if (d.allowed) allowed++;
        },
      });
      a.get('/slow', async () => {
        await gate;
        return 'slow';
      });
      a.get('/fast', async () => 'fast');
    });
    return { port, store, open, allowed: () => allowed };
  }

  test('concurrency leases are released when the response finishes, exactly once', async () => {
    const { port, store, open, allowed } = await leaseApp();
    const slow = send(port, '/slow');
    await eventually(() => allowed() === 1);
    expect((await send(port, '/fast').done).status).toBe(429);
    open();
    expect((await slow.done).status).toBe(200);
    await eventually(() => store.refunds === 1);
    expect((await send(port, '/fast').done).status).toBe(200);
    expect((await send(port, '/fast').done).status).toBe(200);
    await eventually(() => store.refunds === 3);
    await new Promise((r) => setTimeout(r, 50));
    expect(store.refunds).toBe(allowed());
  });

  test('a client that aborts keeps its lease until the handler ends the response, then gives it back once', async () => {
    const { port, store, open, allowed } = await leaseApp();
    const slow = send(port, '/slow');
    slow.done.catch(() => {});
    await eventually(() => allowed() === 1);
    slow.abort();
    await new Promise((r) => setTimeout(r, 50));
    // The handler still runs: its lease holds, so no second handler starts.
    expect(store.refunds).toBe(0);
    expect((await send(port, '/fast').done).status).toBe(429);
    open();
    await eventually(() => store.refunds === 1);
    expect((await send(port, '/fast').done).status).toBe(200);
    await eventually(() => store.refunds === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(store.refunds).toBe(2);
    expect(allowed()).toBe(2);
  });
});

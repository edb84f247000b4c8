/** @sluice/hono's part of test/runtimes/probe.ts, here where hono resolves: one app, its own getIp. */
import type { MemoryStore } from '@sluice/core';
import { rateLimiter } from '@sluice/hono';
import { Hono } from 'hono';

/** Two requests of one client to an app limited to one a minute. */
export async function honoResponses(store: MemoryStore): Promise<Response[]> {
  const app = new Hono();
  const getIp = (c: { req: { header(name: string): string | undefined } }) => c.req.header('x-ip');
  app.use(rateLimiter({ limit: 1, window: '1m', algorithm: 'fixed-window', getIp, store }));
  app.get('/', (c) => c.text('hono'));
  const out: Response[] = [];
  for (let i = 0; i < 2; i++)
    out.push(await app.fetch(new Request('http://x/', { headers: { 'x-ip': '203.0.113.7' } })));
  return out;
}

/** Hono 4 on @hono/node-server 2 and 1 for the shared adapter suite (test/adapters). */
import type { Server } from 'node:http';
import { serve as serve2 } from '@hono/node-server';
import type { Decision } from '@sluice/core';
import { rateLimiter } from '@sluice/hono';
import { Hono, type Context as HonoContext } from 'hono';
import { serve as serve1 } from 'hono-node-server1';
import { control, type Framework, listening, slow, view } from '../../../test/adapters/framework.js';

/**
 * The client behind `hops` proxies: the X-Forwarded-For entry that many places before the connection's
 * address, or the first entry (any number of proxies, as Express's `trust proxy` true takes it).
 */
function behindProxies(c: HonoContext, hops: number): string | undefined {
  const remote = (c.env as { incoming: { socket: { remoteAddress?: string } } }).incoming.socket
    .remoteAddress;
  const chain = [...(c.req.header('x-forwarded-for')?.split(',') ?? []), remote];
  return chain[Math.max(0, chain.length - 1 - hops)]?.trim();
}

function onHono(name: string, serve: typeof serve2): Framework {
  return {
    name,
    header: (c, h) => (c as HonoContext).req.header(h),
    answer: (body) => (c: HonoContext, _: unknown, d: Decision) => c.json(body(d, c.get('rateLimit'))),
    async start(options, settings = {}) {
      const app = new Hono();
      const c = control();
      app.onError((error, ctx) => ctx.json({ error: error.message }, 500));
      // Hono reads no proxy header of its own: `getIp` is how an app trusts one.
      const { trustProxy } = settings;
      const hops = trustProxy === true ? Number.POSITIVE_INFINITY : Number(trustProxy ?? 0);
      const getIp = (ctx: HonoContext) => behindProxies(ctx, hops);
      const { timeoutMs } = settings;
      if (timeoutMs !== undefined)
        app.use((ctx, next) => {
          if (!slow({ 'x-slow': ctx.req.header('x-slow') })) return next();
          const timedOut = new Promise<globalThis.Response>((resolve) =>
            setTimeout(() => resolve(ctx.text('timeout', 503)), timeoutMs),
          );
          return Promise.race([next().then(() => ctx.res), timedOut]);
        });
      const { beforeMs } = settings;
      if (beforeMs !== undefined)
        app.use(async (_ctx, next) => {
          await new Promise((resolve) => setTimeout(resolve, beforeMs));
          await next();
        });
      const limiter = rateLimiter(trustProxy ? { ...options, getIp } : options);
      app.use(limiter);
      if (settings.second !== undefined) app.use(rateLimiter(settings.second));
      app.get('/', (ctx) => {
        c.reached.push(Date.now());
        return ctx.json(view(ctx.get('rateLimit')));
      });
      for (const path of ['ok', 'fast']) app.get(`/${path}`, (ctx) => ctx.text(path));
      app.get('/fail', (ctx) => ctx.text('no', 500));
      app.post('/login', async (ctx) => {
        if (ctx.req.query('pw') !== 'right') return ctx.body('', 401);
        if (!settings.resetOnLogin) return ctx.body('', 200);
        await limiter.reset(ctx);
        return ctx.json({ subject: await limiter.subjectOf(ctx) });
      });
      app.get('/slow', (ctx) => c.gate.then(() => ctx.text('slow')));
      app.get(
        '/hang',
        (ctx) =>
          new Promise<globalThis.Response>((resolve) => {
            c.held.push((status) => resolve(ctx.text('late', status as 500)));
          }),
      );
      app.get('/work', async (ctx) => {
        await c.work();
        return ctx.text('failed', 500);
      });
      const server = serve({
        fetch: app.fetch,
        hostname: '127.0.0.1',
        port: 0,
        serverOptions: { maxHeaderSize: settings.maxHeaderSize ?? 16384 },
      }) as Server;
      return listening(server, c);
    },
  };
}

export const honoFrameworks: Framework[] = [
  onHono('Hono 4 (node-server 2)', serve2),
  onHono('Hono 4 (node-server 1)', serve1 as unknown as typeof serve2),
];

/** Koa 3 and 2 for the shared adapter suite (test/adapters). */
import { createServer } from 'node:http';
import type { Decision } from '@sluice/core';
import { rateLimiter } from '@sluice/koa';
import type Koa from 'koa';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import { control, type Framework, listening, slow, view } from '../../../test/adapters/framework.js';

/** Errors answered 500 `{ error: message }`. */
export async function errorsAsJson(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  try {
    await next();
  } catch (error) {
    ctx.status = 500;
    ctx.body = { error: (error as Error).message };
  }
}

function onKoa(name: string, Make: typeof Koa3): Framework {
  return {
    name,
    header: (ctx, h) => (ctx as Koa.Context).get(h) || undefined,
    answer: (body) => (ctx: Koa.Context, _: unknown, d: Decision) => {
      ctx.body = body(d, ctx.state.rateLimit);
    },
    async start(options, settings = {}) {
      const app = new Make();
      const c = control();
      app.proxy = Boolean(settings.trustProxy);
      if (typeof settings.trustProxy === 'number') app.maxIpsCount = settings.trustProxy;
      app.use(errorsAsJson);
      const { timeoutMs } = settings;
      if (timeoutMs !== undefined)
        app.use(async (ctx, next) => {
          if (!slow(ctx.headers)) return next();
          let timedOut = false;
          const timer = new Promise<void>((resolve) =>
            setTimeout(() => {
              timedOut = true;
              resolve();
            }, timeoutMs),
          );
          await Promise.race([next(), timer]);
          if (timedOut) {
            ctx.status = 503;
            ctx.body = 'timeout';
          }
        });
      const { beforeMs } = settings;
      if (beforeMs !== undefined)
        app.use(async (_ctx, next) => {
          await new Promise((resolve) => setTimeout(resolve, beforeMs));
          await next();
        });
      const limiter = rateLimiter(options);
      app.use(limiter);
      if (settings.second !== undefined) app.use(rateLimiter(settings.second));
      app.use(async (ctx) => {
        const route = `${ctx.method} ${ctx.path}`;
        if (route === 'GET /') {
          c.reached.push(Date.now());
          ctx.body = view(ctx.state.rateLimit);
        } else if (route === 'GET /ok' || route === 'GET /fast') ctx.body = ctx.path.slice(1);
        else if (route === 'GET /fail') {
          ctx.status = 500;
          ctx.body = 'no';
        } else if (route === 'POST /login') {
          ctx.status = ctx.query.pw === 'right' ? 200 : 401;
          ctx.body = '';
          if (ctx.status === 200 && settings.resetOnLogin) {
            await limiter.reset(ctx);
            ctx.body = { subject: await limiter.subjectOf(ctx) };
          }
        } else if (route === 'GET /slow') {
          await c.gate;
          ctx.body = 'slow';
        } else if (route === 'GET /work') {
          await c.work();
          ctx.status = 500;
          ctx.body = 'failed';
        } else if (route === 'GET /hang') {
          await new Promise<void>((resolve) => {
            c.held.push((status) => {
              ctx.status = status;
              ctx.body = 'late';
              resolve();
            });
          });
        }
      });
      const server = createServer({ maxHeaderSize: settings.maxHeaderSize ?? 16384 }, app.callback());
      server.listen(0, '127.0.0.1');
      return listening(server, c);
    },
  };
}

export const koaFrameworks: Framework[] = [
  onKoa('Koa 3', Koa3),
  onKoa('Koa 2', Koa2 as unknown as typeof Koa3),
];

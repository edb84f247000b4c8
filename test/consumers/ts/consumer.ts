/**
 * Type-checked, never run: the declarations a TypeScript consumer sees. run.mjs copies this file into
 * an ESM folder and a CommonJS folder of the install, so node16 resolution reads both the .d.ts and
 * the .d.cts files; bundler and node10 resolution read it too. `@ts-expect-error` lines prove the
 * types are real (an `any` would let them compile, and the check would then fail).
 */

import { Controller, Get, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import {
  createLimiter,
  type Decision,
  type LimiterOptions,
  MemoryStore,
  RedisStore,
  SluiceConfigError,
} from '@sluice/core';
import { manualClock } from '@sluice/core/testing';
import { rateLimiter } from '@sluice/express';
import sluice, { sluice as namedSluice } from '@sluice/fastify';
import { rateLimiter as fetchLimiter } from '@sluice/fetch';
import { rateLimiter as honoLimiter } from '@sluice/hono';
import { rateLimiter as koaLimiter } from '@sluice/koa';
import { RateLimit, SkipRateLimit, SluiceGuard, SluiceModule } from '@sluice/nestjs';
import express from 'express';
import { fastify } from 'fastify';
import { Hono } from 'hono';
// Cluster: the one client type every ioredis 5 and 6 exports by name (Redis is named from 5.0.3 on).
import type { Cluster } from 'ioredis';
import Koa from 'koa';

export async function core(): Promise<number> {
  const options: LimiterOptions = {
    policies: [
      { limit: 10, window: '1s', algorithm: 'token-bucket' },
      { limit: 1000, window: '1h', name: 'hourly' },
    ],
    store: new MemoryStore({ maxKeys: 1000, clock: manualClock() }),
    name: 'api',
    onStoreError: 'deny',
    storeTimeout: '250ms',
  };
  const limiter = createLimiter(options);
  const decision: Decision = await limiter.consume('user-42', { cost: 2 });
  await decision.refund?.();
  await limiter.peek('user-42');
  await limiter.reset('user-42');
  // @ts-expect-error: not one of the seven algorithms
  createLimiter({ limit: 1, window: '1s', algorithm: 'leaky' });
  // @ts-expect-error: onStoreError is 'local' | 'allow' | 'deny'
  createLimiter({ limit: 1, window: '1s', onStoreError: 'ignore' });
  try {
    createLimiter({ limit: 0, window: '1s' });
  } catch (error) {
    if (error instanceof SluiceConfigError) return error.code.length;
  }
  return decision.retryAfterMs + decision.policies[0]!.remaining;
}

export function redis(client: Cluster): RedisStore {
  return new RedisStore({ client });
}

export function expressApp(): express.Express {
  const app = express();
  app.use(rateLimiter({ limit: 100, window: '15m' }));
  app.post(
    '/login',
    rateLimiter({ name: 'login', policies: [{ limit: 5, window: '1m' }], subject: ['api-key', 'ip'] }),
    (req, res) => {
      const decision: Decision | undefined = req.rateLimit;
      res.json({ remaining: decision?.remaining });
    },
  );
  // @ts-expect-error: headers is 'draft-10' | 'draft-7' | 'draft-6' | false
  rateLimiter({ limit: 1, window: '1s', headers: 'draft-5' });
  return app;
}

export async function fastifyApp(): Promise<void> {
  const app = fastify();
  await app.register(sluice, { limit: 100, window: '1m' });
  await app.register(namedSluice, { global: false, limit: 5, window: '1s', hook: 'preHandler' });
  app.get('/search', { config: { rateLimit: { limit: 10, window: '1s' } } }, async (request) => {
    const decision: Decision | undefined = request.rateLimit;
    return { remaining: decision?.remaining };
  });
  app.get('/health', { config: { rateLimit: false } }, async () => 'ok');
  // @ts-expect-error: a route's limit is a number
  app.get('/typo', { config: { rateLimit: { limit: 'ten' } } }, async () => 'no');
  await app.ready();
}

export function honoApp(): Hono {
  const app = new Hono();
  app.use(honoLimiter({ limit: 100, window: '15m', getIp: (c) => c.req.header('x-real-ip') }));
  app.get('/', (c) => {
    const decision: Decision | undefined = c.get('rateLimit');
    return c.json({ remaining: decision?.remaining });
  });
  // @ts-expect-error: getIp is a function of the context
  honoLimiter({ limit: 1, window: '1s', getIp: 'x-real-ip' });
  return app;
}

/** A Worker's shape: `(request, env, ctx)`, the context typed through to getIp. */
export const worker = {
  fetch: fetchLimiter<[{ TRUSTED: string }, unknown]>({
    limit: 100,
    window: '1m',
    getIp: (request, env) =>
      env.TRUSTED ? (request.headers.get('cf-connecting-ip') ?? undefined) : undefined,
  }).wrap(async (request) => new Response(request.url)),
};

// @ts-expect-error: handler answers with a Response, not a body
fetchLimiter({ limit: 1, window: '1s', getIp: () => '1.2.3.4', handler: () => ({ error: 'slow down' }) });

export function koaApp(): Koa {
  const app = new Koa();
  app.use(koaLimiter({ limit: 100, window: '15m', subject: (ctx) => ctx.get('x-user') || undefined }));
  app.use((ctx) => {
    const decision: Decision | undefined = ctx.state.rateLimit;
    ctx.body = { remaining: decision?.remaining };
  });
  // @ts-expect-error: headers is 'draft-10' | 'draft-7' | 'draft-6' | false
  koaLimiter({ limit: 1, window: '1s', headers: 'draft-5' });
  return app;
}

@Controller()
export class NestController {
  @RateLimit({ name: 'login', limit: 5, window: '1m' })
  @Get('login')
  login() {
    return 'welcome';
  }

  @SkipRateLimit()
  @Get('health')
  health() {
    return 'ok';
  }
}

@Module({
  imports: [
    SluiceModule.forRoot({ limit: 100, window: '1m' }),
    SluiceModule.forRootAsync({ useFactory: async () => ({ limit: 10, window: '1s' }) }),
  ],
  controllers: [NestController],
  providers: [{ provide: APP_GUARD, useClass: SluiceGuard }],
})
export class NestAppModule {}

// @ts-expect-error: window is a Duration
RateLimit({ limit: 5, window: true });

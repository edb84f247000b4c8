/**
 * Type-checked, never run: the declarations a TypeScript consumer sees. run.mjs copies this file into
 * an ESM folder and a CommonJS folder of the install, so node16 resolution reads both the .d.ts and
 * the .d.cts files; bundler and node10 resolution read it too. `@ts-expect-error` lines prove the
 * types are real (an `any` would let them compile, and the check would then fail).
 */
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
import express from 'express';
import { fastify } from 'fastify';
// Cluster: the one client type every ioredis 5 and 6 exports by name (Redis is named from 5.0.3 on).
import type { Cluster } from 'ioredis';

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

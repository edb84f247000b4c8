import type { Decision, Store } from '@sluice/core';
import { type RateLimiterOptions, rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import request from 'supertest';
import { expressVersions } from '../../packages/express/test/support.js';
import { frameworks } from '../../packages/fastify/test/frameworks.js';
import { failingStore } from '../fixtures/stores.js';

// A custom `handler` answered only 429s: 403 (ban, deny list) and 503 (store failed) went around it.
// API.md r2: it answers every refusal, `decision.reason` says which. Failed on 13f5928.

type Seen = Array<{ status: number; reason: Decision['reason'] }>;

async function onExpress(options: RateLimiterOptions, times: number, seen: Seen): Promise<number[]> {
  const app = expressVersions[0]![1]();
  app.use(
    rateLimiter({
      ...options,
      handler: (_req, res, decision) => {
        seen.push({ status: res.statusCode, reason: decision.reason });
        res.json({ custom: true });
      },
    }),
  );
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) statuses.push((await request(app).get('/')).status);
  return statuses;
}

async function onFastify(options: RateLimiterOptions, times: number, seen: Seen): Promise<number[]> {
  const app = frameworks[0]![1]();
  await app.register(sluice, {
    ...(options as object),
    handler: (
      _request: unknown,
      reply: { statusCode: number; send(b: unknown): void },
      decision: Decision,
    ) => {
      seen.push({ status: reply.statusCode, reason: decision.reason });
      reply.send({ custom: true });
    },
  } as never);
  app.get('/', async () => 'ok');
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) statuses.push((await app.inject({ url: '/' })).statusCode);
  await app.close();
  return statuses;
}

describe.each([
  ['Express', onExpress],
  ['Fastify', onFastify],
])('%s: the handler answers every refusal', (_name, run) => {
  it('429, then 403 for the ban', async () => {
    const seen: Seen = [];
    const statuses = await run({ limit: 1, window: '1m', ban: { after: 1, for: '1h' } }, 3, seen);
    expect(statuses).toEqual([200, 429, 403]);
    expect(seen).toEqual([
      { status: 429, reason: 'limit' },
      { status: 403, reason: 'ban' },
    ]);
  });

  it('403 for the deny list', async () => {
    const seen: Seen = [];
    expect(await run({ limit: 5, window: '1m', denyList: ['127.0.0.1'] }, 1, seen)).toEqual([403]);
    expect(seen).toEqual([{ status: 403, reason: 'deny-list' }]);
  });

  it('503 when the store failed and onStoreError is deny', async () => {
    const seen: Seen = [];
    const store: Store = failingStore();
    expect(await run({ limit: 5, window: '1m', store, onStoreError: 'deny' }, 1, seen)).toEqual([503]);
    expect(seen).toEqual([{ status: 503, reason: 'store-error' }]);
  });
});

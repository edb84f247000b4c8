import { ErrorCodes, type SluiceConfigError } from '@sluice/core';
import { type RateLimiterOptions, rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import request from 'supertest';
import { errorsAsJson, expressVersions } from '../../packages/express/test/support.js';
import { frameworks } from '../../packages/fastify/test/frameworks.js';

/** `plans` + `plan` (API.md r2): limits that depend on the request, each plan its own policies. */
const tiers: RateLimiterOptions = {
  name: 'api',
  plans: {
    free: { limit: 2, window: '1m' },
    pro: {
      policies: [
        { name: 'burst', limit: 5, window: '1s', algorithm: 'token-bucket' },
        { name: 'daily', limit: 1000, window: '1d' },
      ],
    },
  },
  plan: (req) => String(req.headers['x-plan'] ?? 'free'),
};

type Answer = { status: number; headers: Record<string, unknown>; body: string };
type Ask = (plan: string) => Promise<Answer>;

async function onExpress(options: RateLimiterOptions): Promise<Ask> {
  const app = expressVersions[0]![1]();
  app.use(rateLimiter(options));
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  errorsAsJson(app);
  return async (plan) => {
    const r = await request(app).get('/').set('x-plan', plan);
    return { status: r.status, headers: r.headers, body: r.text };
  };
}

async function onFastify(options: RateLimiterOptions): Promise<Ask> {
  const app = frameworks[0]![1]();
  app.setErrorHandler((error: Error & { code?: string }, _request, reply) =>
    reply.code(500).send(error.code),
  );
  await app.register(sluice, options as never);
  app.get('/', async () => 'ok');
  return async (plan) => {
    const r = await app.inject({ url: '/', headers: { 'x-plan': plan } });
    return { status: r.statusCode, headers: r.headers, body: r.body };
  };
}

describe.each([
  ['Express', onExpress],
  ['Fastify', onFastify],
])('%s: plans', (_name, make) => {
  it("each request is limited by its plan's policies, which its headers describe", async () => {
    const ask = await make(tiers);
    const free = [await ask('free'), await ask('free'), await ask('free')];
    expect(free.map((a) => a.status)).toEqual([200, 200, 429]);
    expect(free[0]!.headers['ratelimit-policy']).toBe('"2-per-1m";q=2;w=60');
    const pro = [];
    for (let i = 0; i < 6; i++) pro.push(await ask('pro'));
    expect(pro.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(pro[0]!.headers['ratelimit-policy']).toBe('"burst";q=5;w=1, "daily";q=1000;w=86400');
  });

  it('a plan name that is no plan is an error passed to the framework', async () => {
    const ask = await make(tiers);
    const answer = await ask('enterprise');
    expect(answer.status).toBe(500);
    expect(answer.body).toMatch(new RegExp(`${ErrorCodes.UNKNOWN_PLAN}|names no plan`));
  });
});

describe('plans are checked at construction', () => {
  const errorOf = (options: RateLimiterOptions) => {
    try {
      rateLimiter(options);
    } catch (error) {
      return error as SluiceConfigError;
    }
    throw new Error('no error');
  };

  it('a plan with a wrong window names the plan', () => {
    const error = errorOf({ plans: { free: { limit: 2, window: 'soon' } }, plan: () => 'free' });
    expect(error).toMatchObject({ code: ErrorCodes.INVALID_DURATION, option: 'plans.free.window' });
  });

  it('plans without plan, or with policies of their own beside them, are refused', () => {
    expect(errorOf({ plans: { free: { limit: 2, window: '1m' } } })).toMatchObject({
      code: ErrorCodes.INVALID_OPTION,
      option: 'plan',
    });
    expect(
      errorOf({ limit: 1, window: '1m', plans: { free: { limit: 2, window: '1m' } }, plan: () => 'free' }),
    ).toMatchObject({
      code: ErrorCodes.CONFLICTING_OPTIONS,
    });
    expect(
      errorOf({
        plans: { free: { limit: 2, window: '1m', max: 3 } as never },
        plan: () => 'free',
      }),
    ).toMatchObject({
      code: ErrorCodes.UNKNOWN_OPTION,
      option: 'plans.free.max',
    });
  });
});

import { ErrorCodes, MemoryStore, type SluiceConfigError } from '@sluice/core';
import { type RateLimiterOptions, rateLimiter } from '@sluice/express';
import { eachFramework } from './frameworks.js';
import { get, serving } from './support.js';

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
  plan: () => 'free',
};

describe.each(eachFramework)('%s: plans', (_name, framework) => {
  const start = serving(framework);
  const byHeader = { ...tiers, plan: (req: unknown) => framework.header(req, 'x-plan') ?? 'free' };

  it("each request is limited by its plan's policies, which its headers describe", async () => {
    // A still clock: the burst bucket refills one every 200 ms, and on a loaded machine six requests
    // took longer than that (the sixth was let through).
    const app = await start({ ...byHeader, store: new MemoryStore({ clock: () => 1_700_000_000_000 }) });
    const ask = (plan: string) => get(app, '/ok', { 'x-plan': plan });
    const free = [await ask('free'), await ask('free'), await ask('free')];
    expect(free.map((a) => a.status)).toEqual([200, 200, 429]);
    expect(free[0]!.headers['ratelimit-policy']).toBe('"2-per-1m";q=2;w=60');
    const pro = [];
    for (let i = 0; i < 6; i++) pro.push(await ask('pro'));
    expect(pro.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(pro[0]!.headers['ratelimit-policy']).toBe('"burst";q=5;w=1, "daily";q=1000;w=86400');
  });

  it('a plan name that is no plan is an error passed to the framework', async () => {
    const answer = await get(await start(byHeader), '/ok', { 'x-plan': 'enterprise' });
    expect(answer.status).toBe(500);
    expect(answer.body.error).toMatch(/names no plan|enterprise/);
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

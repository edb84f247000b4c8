import { MemoryStore, SluiceConfigError } from '@sluice/core';
import sluice, { type SluiceFastifyOptions } from '@sluice/fastify';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { alignedClock, frameworks, type MakeApp } from './support.js';

// Every HTTP option's behaviour is proven once for all frameworks in test/adapters; here, what only
// the plugin has: its hook and its registration.
describe.each(frameworks)('%s: the plugin', (_, makeApp: MakeApp) => {
  const apps: FastifyInstance[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  const get = (app: FastifyInstance, extra: Partial<InjectOptions> = {}) =>
    app.inject({ method: 'GET', url: '/', ...extra });

  async function statuses(app: FastifyInstance, requests: Partial<InjectOptions>[]): Promise<number[]> {
    const out: number[] = [];
    for (const extra of requests) out.push((await get(app, extra)).statusCode);
    return out;
  }

  describe('hook', () => {
    /** An app whose authentication runs as a preHandler hook and puts the user on the request. */
    async function authenticated(hook: 'onRequest' | 'preHandler' | undefined) {
      const app = makeApp();
      apps.push(app);
      app.decorateRequest('user', null);
      app.addHook('preHandler', async (request) => {
        (request as unknown as { user: string | null }).user = (request.headers['x-user'] as string) ?? null;
      });
      await app.register(sluice, {
        limit: 1,
        window: '1m',
        store: new MemoryStore({ clock: alignedClock() }),
        subject: (request) => (request as unknown as { user: string | null }).user ?? undefined,
        ...(hook === undefined ? {} : { hook }),
      });
      app.get('/', async () => 'ok');
      const as = (user: string) => ({ headers: { 'x-user': user } });
      return statuses(app, [as('ann'), as('bob'), as('ann')]);
    }

    test("'preHandler': the subject comes from authentication in an earlier hook", async () => {
      expect(await authenticated('preHandler')).toEqual([200, 200, 429]);
    });

    test("default 'onRequest': decided before authentication, so by IP", async () => {
      expect(await authenticated(undefined)).toEqual([200, 429, 429]);
    });
  });

  describe('bad options fail register with SluiceConfigError', () => {
    test.each([
      ['a bad limit', { limit: 0, window: '1m' }, 'ERR_SLUICE_INVALID_LIMIT'],
      ['an unknown option', { limit: 1, window: '1m', max: 5 }, 'ERR_SLUICE_UNKNOWN_OPTION'],
      ['a bad duration', { limit: 1, window: 'soon' }, 'ERR_SLUICE_INVALID_DURATION'],
      ['a bad hook', { limit: 1, window: '1m', hook: 'onSend' }, 'ERR_SLUICE_INVALID_OPTION'],
      ['a bad global', { limit: 1, window: '1m', global: 'yes' }, 'ERR_SLUICE_INVALID_OPTION'],
      ['no policy', {}, 'ERR_SLUICE_NO_POLICY'],
      [
        'global: false with a bad header mode',
        { global: false, headers: 'draft-99' },
        'ERR_SLUICE_INVALID_OPTION',
      ],
      [
        'global: false with an unknown option',
        { global: false, limit: 1, windowMs: 5 },
        'ERR_SLUICE_UNKNOWN_OPTION',
      ],
    ])('%s', async (_n, options, code) => {
      const app = makeApp();
      apps.push(app);
      const error = await Promise.resolve(app.register(sluice, options as SluiceFastifyOptions)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SluiceConfigError);
      expect(error).toMatchObject({ code });
    });

    test('global: false with no policy of its own is fine: the routes bring theirs', async () => {
      const app = makeApp();
      apps.push(app);
      await app.register(sluice, { global: false, headers: 'draft-7' });
      app.get('/', { config: { rateLimit: { limit: 1, window: '1m' } } }, async () => 'ok');
      expect(await statuses(app, [{}, {}])).toEqual([200, 429]);
      expect((await get(app)).headers.ratelimit).toMatch(/^limit=1, remaining=0/);
    });
  });
});

/**
 * Type tests, checked by `pnpm typecheck` (tsc over packages/*\/test), never run: `config.rateLimit`
 * and `request.rateLimit` are typed through Fastify's own interfaces.
 */
import type { Decision } from '@sluice/core';
import sluice, {
  sluice as named,
  type RouteRateLimitOptions,
  type SluiceFastifyOptions,
} from '@sluice/fastify';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';

/** Compiles only when `value` has exactly type `T`. */
function expectType<T>(value: T): T {
  return value;
}
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
function assertTrue<T extends true>(): T | undefined {
  return undefined;
}

export async function typeTests(): Promise<void> {
  const app = Fastify();
  expectType<typeof sluice>(named);
  await app.register(sluice, { limit: 100, window: '1m' });
  await app.register(sluice, { global: false, hook: 'preHandler', subject: ['api-key', 'ip'] });
  // @ts-expect-error an unknown hook name
  await app.register(sluice, { limit: 1, window: '1s', hook: 'onSend' });
  // @ts-expect-error global is a boolean
  await app.register(sluice, { limit: 1, window: '1s', global: 'no' });
  // @ts-expect-error a limit is a number
  await app.register(sluice, { limit: '10', window: '1s' });

  // Plugin callbacks see Fastify's request and reply.
  await app.register(sluice, {
    limit: 1,
    window: '1s',
    subject: (request) => assertRequest(request).headers['x-user'] as string | undefined,
    handler: (request, reply, decision) => {
      assertRequest(request);
      expectType<FastifyReply>(reply);
      expectType<Decision>(decision);
    },
  });

  // config.rateLimit: the route's options, or false. (Fastify infers a route's config type from the
  // literal and intersects it with FastifyContextConfig, so a literal `true` or an extra key slips
  // through the route shorthands; wrong values of known options do not.)
  app.get(
    '/search',
    { config: { rateLimit: { limit: 10, window: '1s', name: 'search' } } },
    async () => 'ok',
  );
  app.get('/health', { config: { rateLimit: false } }, async () => 'ok');
  app.get('/hooked', { config: { rateLimit: { hook: 'preHandler' } } }, async () => 'ok');
  // @ts-expect-error algorithm names are checked
  app.get('/bad1', { config: { rateLimit: { algorithm: 'token-buckets' } } }, async () => 'ok');
  // @ts-expect-error a limit is a number
  app.get('/bad2', { config: { rateLimit: { limit: '10' } } }, async () => 'ok');
  // @ts-expect-error the hook is one of two
  app.get('/bad3', { config: { rateLimit: { hook: 'onSend' } } }, async () => 'ok');
  app.route({
    method: 'GET',
    url: '/bad4',
    // @ts-expect-error the same through app.route
    config: { rateLimit: { headers: 'draft-99' } },
    handler: async () => 'ok',
  });

  // request.rateLimit: the decision, or undefined when no limiter ran.
  app.get('/decision', async (request) => {
    assertTrue<Equal<typeof request.rateLimit, Decision | undefined>>();
    return request.rateLimit?.remaining;
  });
  app.get('/route-config', async (request) => {
    const config = request.routeOptions.config.rateLimit;
    assertTrue<Equal<typeof config, RouteRateLimitOptions | false | undefined>>();
  });

  // The options types: a route's options are the plugin's without `global`.
  const route: RouteRateLimitOptions = { limit: 1, window: 1000 };
  const plugin: SluiceFastifyOptions = { ...route, global: true };
  void plugin;
  // @ts-expect-error
  const noGlobal: RouteRateLimitOptions = { global: true };
  void noGlobal;
}

function assertRequest(request: FastifyRequest): FastifyRequest {
  return request;
}

import 'reflect-metadata';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import {
  Controller,
  type INestApplication,
  type INestApplicationContext,
  Logger,
  Module,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { GraphQLModule, Query, Resolver } from '@nestjs/graphql';
import { ExpressAdapter } from '@nestjs/platform-express';
import { RateLimit, SkipRateLimit, SluiceGuard, SluiceModule, type SluiceOptions } from '@sluice/nestjs';
import { recordWarnings } from '../../../test/support/warnings.js';

// The guard returned true for every context but HTTP, so a GraphQL app was unlimited without a word,
// and so was a microservice. GraphQL over HTTP is limited by the request behind the resolver now; a
// context with no HTTP request is let through with ERR_SLUICE_UNLIMITED_CONTEXT, once.
// Every test here but the @SkipRateLimit() one failed on 6cc09fa.

/** Resolver runs, by field. */
const runs = { hello: 0, world: 0, free: 0 };

@Resolver()
class HelloResolver {
  @Query(() => String)
  hello() {
    runs.hello++;
    return 'hi';
  }

  @Query(() => String)
  world() {
    runs.world++;
    return 'world';
  }

  @SkipRateLimit()
  @Query(() => String)
  free() {
    runs.free++;
    return 'free';
  }
}

/** A message handler, as a microservice controller has: guarded like any other. */
@Controller()
class EventsController {
  @RateLimit({ limit: 1, window: '1m' })
  onEvent() {
    return 'handled';
  }
}

function appModule(options: SluiceOptions): object {
  @Module({
    imports: [
      SluiceModule.forRoot(options),
      GraphQLModule.forRoot<ApolloDriverConfig>({ driver: ApolloDriver, autoSchemaFile: true }),
    ],
    controllers: [EventsController],
    providers: [HelloResolver, { provide: APP_GUARD, useClass: SluiceGuard }],
  })
  class AppModule {}
  return AppModule;
}

describe('Nest 11 GraphQL over HTTP (Apollo, Express)', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    runs.hello = runs.world = runs.free = 0;
  });

  async function start(options: SluiceOptions): Promise<(query: string) => Promise<Response>> {
    app = await NestFactory.create(appModule(options) as never, new ExpressAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    return (query) =>
      fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      });
  }

  test('the query past the limit is refused as a GraphQL error, with the headers; its resolver does not run', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => {});
    try {
      const post = await start({ limit: 2, window: '1m' });
      for (const remaining of [1, 0]) {
        const allowed = await post('{ hello }');
        expect(await allowed.json()).toEqual({ data: { hello: 'hi' } });
        expect(allowed.headers.get('ratelimit')).toMatch(new RegExp(`^"2-per-1m";r=${remaining};t=\\d+$`));
      }
      const refused = await post('{ hello }');
      expect(runs.hello).toBe(2);
      // The GraphQL layer answers: @nestjs/apollo keeps 200 for a response that has `data`.
      expect(refused.status).toBe(200);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(refused.headers.get('ratelimit')).toMatch(/^"2-per-1m";r=0;t=\d+$/);
      const body = (await refused.json()) as {
        data: unknown;
        errors: { message: string; extensions: object }[];
      };
      expect(body.data).toBeNull();
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]!.message).toBe(
        `Rate limit "2-per-1m" exceeded. Retry in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`,
      );
      expect(body.errors[0]!.extensions).toMatchObject({
        code: 'TOO_MANY_REQUESTS',
        status: 429,
        title: 'Too Many Requests',
        policy: '2-per-1m',
        retryAfter,
      });
      expect(logged).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });

  test('a request selecting several fields is one request: charged once, refused whole', async () => {
    const post = await start({ limit: 2, window: '1m' });
    expect(await (await post('{ hello world }')).json()).toEqual({ data: { hello: 'hi', world: 'world' } });
    expect((await post('{ hello }')).headers.get('ratelimit')).toMatch(/^"2-per-1m";r=0;t=\d+$/);
    const refused = (await (await post('{ hello world }')).json()) as {
      errors: { extensions: { code: string } }[];
    };
    // Both fields are non-null: graphql-js reports the first error, the data being null as a whole.
    expect(new Set(refused.errors.map((e) => e.extensions.code))).toEqual(new Set(['TOO_MANY_REQUESTS']));
    expect(runs).toEqual({ hello: 2, world: 1, free: 0 });
  });

  test('@SkipRateLimit() on a resolver: not limited', async () => {
    const post = await start({ limit: 1, window: '1m' });
    for (let i = 0; i < 3; i++)
      expect(await (await post('{ free }')).json()).toEqual({ data: { free: 'free' } });
    expect(runs.free).toBe(3);
  });
});

describe('Nest 11: contexts Sluice cannot limit', () => {
  const warnings = recordWarnings();
  let context: INestApplicationContext | undefined;
  afterEach(async () => {
    await context?.close();
    context = undefined;
  });

  async function guardOf(options: SluiceOptions): Promise<SluiceGuard> {
    context = await NestFactory.createApplicationContext(appModule(options) as never, { logger: false });
    return context.get(SluiceGuard);
  }

  /** A real execution context of this type for the events controller's handler. */
  function contextOf(type: string, args: unknown[]): ExecutionContextHost {
    const host = new ExecutionContextHost(args, EventsController, EventsController.prototype.onEvent);
    host.setType(type);
    return host;
  }

  test('an rpc context is let through, with ERR_SLUICE_UNLIMITED_CONTEXT once per guard', async () => {
    const guard = await guardOf({ limit: 1, window: '1m' });
    for (let i = 0; i < 3; i++)
      expect(await guard.canActivate(contextOf('rpc', [{ event: i }, {}]))).toBe(true);
    expect(warnings.codes).toEqual(['ERR_SLUICE_UNLIMITED_CONTEXT']);
    expect(warnings.messages[0]).toContain("EventsController.onEvent in a 'rpc' context");
  });

  test('graphql without the HTTP request in its context (a subscription over WebSocket) warns as well', async () => {
    const guard = await guardOf({ limit: 1, window: '1m' });
    expect(await guard.canActivate(contextOf('graphql', [undefined, {}, { connectionParams: {} }, {}]))).toBe(
      true,
    );
    expect(await guard.canActivate(contextOf('ws', [{}, {}]))).toBe(true);
    expect(warnings.codes).toEqual(['ERR_SLUICE_UNLIMITED_CONTEXT']);
  });

  test('validate turns the warning off', async () => {
    const guard = await guardOf({
      limit: 1,
      window: '1m',
      validate: { ERR_SLUICE_UNLIMITED_CONTEXT: false },
    });
    expect(await guard.canActivate(contextOf('rpc', [{}, {}]))).toBe(true);
    expect(warnings.codes).toEqual([]);
  });
});

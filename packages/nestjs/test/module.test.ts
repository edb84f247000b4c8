import 'reflect-metadata';
import {
  Controller,
  Get,
  HttpCode,
  type INestApplication,
  Inject,
  Injectable,
  Logger,
  Module,
  Post,
  Req,
  UnauthorizedException,
  UseGuards,
} from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ErrorCodes, MemoryStore, SluiceConfigError } from '@sluice/core';
import {
  RateLimit,
  RateLimitException,
  SkipRateLimit,
  SluiceGuard,
  SluiceModule,
  type SluiceOptions,
} from '@sluice/nestjs';
import request from 'supertest';

// Every HTTP option's behaviour is proven once for all frameworks in test/adapters (Nest 10 and 11,
// both platforms); here, what only the Nest module has: the decorators, the guard's two placements,
// forRootAsync, and Nest's own exception layer (no filter of the app's).

@RateLimit({ limit: 2, window: '1m' })
@Controller('cats')
class CatsController {
  @Get()
  list(@Req() req: { rateLimit?: { remaining: number } }) {
    return { remaining: req.rateLimit?.remaining ?? null };
  }

  @RateLimit({ limit: 1, window: '1m' })
  @Get('one')
  one() {
    return 'one';
  }

  @SkipRateLimit()
  @Get('free')
  free() {
    return 'free';
  }
}

@Controller()
class RootController {
  @Get()
  root(@Req() req: { rateLimit?: { remaining: number } }) {
    return { remaining: req.rateLimit?.remaining ?? null };
  }

  @RateLimit({ name: 'shared', limit: 3 })
  @Get('a')
  a() {
    return 'a';
  }

  @RateLimit({ name: 'shared', limit: 3 })
  @Get('b')
  b() {
    return 'b';
  }
}

@SkipRateLimit()
@Controller('health')
class HealthController {
  @Get()
  health() {
    return 'ok';
  }
}

@UseGuards(SluiceGuard)
@Controller('guarded')
class GuardedController {
  @Get()
  guarded() {
    return 'guarded';
  }
}

@Controller('login')
class LoginController {
  constructor(@Inject(SluiceGuard) private readonly sluice: SluiceGuard) {}

  @RateLimit({ name: 'login', limit: 2 })
  @Post()
  @HttpCode(200)
  async login(@Req() req: { query: { pw?: string } }) {
    if (req.query.pw !== 'right') throw new UnauthorizedException();
    await this.sluice.reset(req);
    return { subject: await this.sluice.subjectOf(req) };
  }
}

/** Three handlers sharing one limit by name: what a per-request limiter looked like to 19c2e33. */
@Controller('auth')
class AuthController {
  @RateLimit({ name: 'auth', limit: 5, window: '1m' })
  @Post('login')
  login() {
    return 'login';
  }

  @RateLimit({ name: 'auth', limit: 5, window: '1m' })
  @Post('signup')
  signup() {
    return 'signup';
  }

  @RateLimit({ name: 'auth', limit: 5, window: '1m' })
  @Post('reset')
  reset() {
    return 'reset';
  }
}

const platforms = [
  ['Express', () => new ExpressAdapter()],
  ['Fastify', () => new FastifyAdapter()],
] as const;

describe.each(platforms)('Nest 11 on %s', (_, adapter) => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  async function start(module: object): Promise<string> {
    const app = await NestFactory.create(module as never, adapter() as never, { logger: false });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    return app.getUrl().then((url) => url.replace('[::1]', '127.0.0.1'));
  }

  function globally(options: SluiceOptions): object {
    @Module({
      imports: [SluiceModule.forRoot(options)],
      controllers: [CatsController, RootController, HealthController],
      providers: [{ provide: APP_GUARD, useClass: SluiceGuard }],
    })
    class AppModule {}
    return AppModule;
  }

  // Found by the review of 19c2e33: limits built on a handler's first request (and kept) counted as
  // limiters made per request, so handlers sharing a name, or a few apps, warned on a correct setup.
  test('no ERR_SLUICE_CREATED_PER_REQUEST for per-handler limits, in one app or several', async () => {
    const codes: string[] = [];
    const spy = jest.spyOn(process, 'emitWarning').mockImplementation(((_: string, o?: { code?: string }) => {
      if (o?.code) codes.push(o.code);
    }) as never);
    try {
      for (let i = 0; i < 3; i++) {
        @Module({
          imports: [SluiceModule.forRoot({ limit: 100, window: '1m' })],
          controllers: [AuthController],
          providers: [{ provide: APP_GUARD, useClass: SluiceGuard }],
        })
        class AuthModule {}
        const url = await start(AuthModule);
        for (const path of ['login', 'signup', 'reset']) {
          expect((await request(url).post(`/auth/${path}`)).status).toBe(201);
        }
      }
      expect(codes.filter((c) => c === 'ERR_SLUICE_CREATED_PER_REQUEST')).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  const statuses = async (url: string, n: number) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await request(url).get('')).status);
    return out;
  };

  test("APP_GUARD: every handler limited by the module's options; the decision on the request", async () => {
    const url = await start(globally({ limit: 2, window: '1m' }));
    expect((await request(url).get('/')).body).toEqual({ remaining: 1 });
    expect(await statuses(url, 2)).toEqual([200, 429]);
  });

  test("Nest's own exception layer: the guard's problem+json answer stands, nothing is logged", async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => {});
    const warned = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => {});
    try {
      const url = await start(globally({ limit: 1, window: '1m' }));
      await request(url).get('/');
      const denied = await request(url).get('/');
      expect(denied.status).toBe(429);
      expect(denied.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(denied.text)).toMatchObject({ status: 429, policy: '1-per-1m' });
      expect(logged).not.toHaveBeenCalled();
      expect(warned).not.toHaveBeenCalled();
    } finally {
      logged.mockRestore();
      warned.mockRestore();
    }
  });

  test('@RateLimit on a controller and on a handler replaces the options; each handler counts apart', async () => {
    const url = await start(globally({ limit: 100, window: '1m' }));
    const cats = [];
    for (let i = 0; i < 3; i++) cats.push((await request(url).get('/cats')).status);
    expect(cats).toEqual([200, 200, 429]);
    expect((await request(url).get('/cats')).headers['ratelimit-policy']).toBe('"2-per-1m";q=2;w=60');
    expect((await request(url).get('/cats/one')).status).toBe(200);
    expect((await request(url).get('/cats/one')).status).toBe(429);
    // The module's limit is untouched by them.
    expect((await request(url).get('/')).body).toEqual({ remaining: 99 });
  });

  test("handlers naming one limiter share its counters, and inherit the module's window", async () => {
    const url = await start(globally({ limit: 100, window: '1m' }));
    const answers = [];
    for (const path of ['/a', '/b', '/a', '/b']) answers.push((await request(url).get(path)).status);
    expect(answers).toEqual([200, 200, 200, 429]);
    expect((await request(url).get('/a')).headers['ratelimit-policy']).toBe('"3-per-1m";q=3;w=60');
  });

  test("the injected guard's reset(req) resets the limit that decided the request: the handler's own", async () => {
    @Module({
      imports: [SluiceModule.forRoot({ limit: 100, window: '1m' })],
      controllers: [LoginController, RootController],
      providers: [{ provide: APP_GUARD, useClass: SluiceGuard }],
    })
    class AppModule {}
    const url = await start(AppModule);
    const attempt = async (pw: string) => (await request(url).post(`/login?pw=${pw}`)).status;
    expect((await request(url).get('/')).body).toEqual({ remaining: 99 });
    expect(await attempt('wrong')).toBe(401);
    const ok = await request(url).post('/login?pw=right');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ subject: 'ip:127.0.0.1' });
    expect([await attempt('wrong'), await attempt('wrong'), await attempt('wrong')]).toEqual([401, 401, 429]);
    // The module's limit was not the one reset.
    expect((await request(url).get('/')).body).toEqual({ remaining: 98 });
  });

  test('@SkipRateLimit on a handler or a controller: never limited, no headers', async () => {
    const url = await start(globally({ limit: 1, window: '1m' }));
    for (let i = 0; i < 3; i++) {
      const free = await request(url).get('/cats/free');
      expect(free.status).toBe(200);
      expect(free.headers.ratelimit).toBeUndefined();
      expect((await request(url).get('/health')).status).toBe(200);
    }
  });

  test('@UseGuards(SluiceGuard): only that controller is limited', async () => {
    @Module({
      imports: [SluiceModule.forRoot({ limit: 1, window: '1m' })],
      controllers: [GuardedController, RootController],
    })
    class AppModule {}
    const url = await start(AppModule);
    expect((await request(url).get('/guarded')).status).toBe(200);
    expect((await request(url).get('/guarded')).status).toBe(429);
    expect(await statuses(url, 3)).toEqual([200, 200, 200]);
  });

  // 5fcb38f failed with Nest's DI error, which names an internal class (RouteLimits).
  test.each([
    [
      'APP_GUARD',
      { providers: [{ provide: APP_GUARD, useClass: SluiceGuard }], controllers: [RootController] },
    ],
    ['@UseGuards(SluiceGuard)', { controllers: [GuardedController] }],
  ])('%s without SluiceModule.forRoot(): start-up fails saying what to import', async (_, metadata) => {
    @Module(metadata)
    class AppModule {}
    const started = NestFactory.create(AppModule, adapter() as never, { logger: false, abortOnError: false });
    const error = await started.then(
      () => new Error('started'),
      (e: Error) => e,
    );
    expect(error.message).toContain('SluiceGuard needs SluiceModule.forRoot(options)');
    expect(error.message).toContain('in the imports of your root module');
    expect(error.message).not.toContain('RouteLimits');
  });

  test('forRootAsync: options from a factory and what it injects', async () => {
    @Injectable()
    class Settings {
      readonly limit = 1;
    }
    @Module({ providers: [Settings], exports: [Settings] })
    class SettingsModule {}
    @Module({
      imports: [
        SluiceModule.forRootAsync({
          imports: [SettingsModule],
          inject: [Settings],
          useFactory: async (settings: Settings) => ({
            limit: settings.limit,
            window: '1m',
            store: new MemoryStore(),
          }),
        }),
      ],
      controllers: [RootController],
      providers: [{ provide: APP_GUARD, useClass: SluiceGuard }],
    })
    class AppModule {}
    const url = await start(AppModule);
    expect(await statuses(url, 2)).toEqual([200, 429]);
  });
});

test('options are checked by forRoot and @RateLimit, at start-up', () => {
  expect(() => SluiceModule.forRoot({ limit: 1, window: 'soon' })).toThrow(
    expect.objectContaining({ code: ErrorCodes.INVALID_DURATION }),
  );
  expect(() => SluiceModule.forRoot({ limit: 1, window: '1m', max: 3 } as SluiceOptions)).toThrow(
    SluiceConfigError,
  );
  expect(() => RateLimit(null as never)).toThrow(TypeError);
  // @RateLimit() is checked when it decorates: what the module's options fill in is stood in for.
  expect(() => RateLimit({ window: 'soon' })).toThrow(
    expect.objectContaining({ code: ErrorCodes.INVALID_DURATION }),
  );
  expect(() => RateLimit({ limit: 5, policies: [] })).toThrow(SluiceConfigError);
  expect(() => RateLimit({ limit: 5 })).not.toThrow();
});

test('RateLimitException is a Nest HttpException with the refusal', () => {
  const error = new RateLimitException(429, undefined);
  expect(error.getStatus()).toBe(429);
});

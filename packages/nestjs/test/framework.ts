/**
 * NestJS for the shared adapter suite (test/adapters): the suite's routes as one Nest controller,
 * `SluiceModule.forRoot(options)` with `SluiceGuard` as APP_GUARD, on the Express and the Fastify
 * platform. Built from the Nest packages given, so one driver serves Nest 11 (./nest11.ts) and Nest 10
 * (./nest10.ts, its own install). Decorators are applied by hand: they must be that Nest's own.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as Common from '@nestjs/common';
import type * as Core from '@nestjs/core';
import type * as PlatformExpress from '@nestjs/platform-express';
import type * as PlatformFastify from '@nestjs/platform-fastify';
import type { Decision } from '@sluice/core';
import { SluiceGuard, SluiceModule } from '@sluice/nestjs';
import { control, type Framework, slow, view } from '../../../test/adapters/framework.js';
import { RouteLimits } from '../src/limits.js';

export interface Nest {
  readonly major: number;
  readonly common: typeof Common;
  readonly core: typeof Core;
  readonly express: typeof PlatformExpress;
  readonly fastify: typeof PlatformFastify;
}

type Res = {
  raw?: unknown;
  status(code: number): Res;
  json?(body: unknown): void;
  send(body?: unknown): void;
};
type Req = { rateLimit?: Decision; headers: Record<string, string | string[] | undefined> };

/** A JSON answer on either platform. */
function sendJson(res: Res, body: unknown): void {
  if (res.raw !== undefined) res.send(body);
  else res.json!(body);
}

function onNest(nest: Nest, platform: 'express' | 'fastify'): Framework {
  const {
    Controller,
    Get,
    Post,
    Req: AtReq,
    Res: AtRes,
    HttpCode,
    Module,
    Catch,
    HttpException,
    Inject,
  } = nest.common;
  return {
    name: `Nest ${nest.major} (${platform === 'express' ? 'Express' : 'Fastify'})`,
    header: (req, h) => [(req as Req).headers[h]].flat()[0],
    answer: (body) => (req: Req, res: Res, d: Decision) => sendJson(res, body(d, req.rateLimit)),
    async start(options, settings = {}) {
      const c = control();
      class Routes {
        // The guard, injected as an app injects it for reset(req) and subjectOf(req).
        constructor(private readonly sluice: SluiceGuard) {}
        root(req: Req) {
          c.reached.push(Date.now());
          return view(req.rateLimit);
        }
        ok() {
          return 'ok';
        }
        fast() {
          return 'fast';
        }
        fail() {
          return 'no';
        }
        async login(req: Req & { query: { pw?: string } }, res: Res) {
          res.status(req.query.pw === 'right' ? 200 : 401);
          if (req.query.pw !== 'right' || !settings.resetOnLogin) return '';
          await this.sluice.reset(req);
          return { subject: await this.sluice.subjectOf(req) };
        }
        slow() {
          return c.gate.then(() => 'slow');
        }
        hang(res: Res) {
          return new Promise((resolve) => {
            c.held.push((status) => {
              res.status(status);
              resolve('late');
            });
          });
        }
        async work(res: Res) {
          await c.work();
          res.status(500);
          return 'failed';
        }
      }
      const method = (key: keyof Routes, ...decorators: MethodDecorator[]) => {
        const descriptor = Object.getOwnPropertyDescriptor(Routes.prototype, key)!;
        for (const decorate of decorators) decorate(Routes.prototype, key, descriptor);
      };
      const param = (key: keyof Routes, index: number, decorate: ParameterDecorator) =>
        decorate(Routes.prototype, key, index);
      method('root', Get('/'));
      param('root', 0, AtReq());
      method('ok', Get('/ok'));
      method('fast', Get('/fast'));
      method('fail', Get('/fail'), HttpCode(500));
      method('login', Post('/login'));
      param('login', 0, AtReq());
      param('login', 1, AtRes({ passthrough: true }));
      method('slow', Get('/slow'));
      method('hang', Get('/hang'));
      param('hang', 0, AtRes({ passthrough: true }));
      method('work', Get('/work'));
      param('work', 0, AtRes({ passthrough: true }));
      Inject(SluiceGuard)(Routes, undefined as never, 0);
      Controller()(Routes);

      /** Errors reach the test as 500 { error }; a refusal the guard answered is left alone. */
      class Errors {
        catch(error: Error, host: Common.ArgumentsHost) {
          const res = host.switchToHttp().getResponse<Res & { headersSent?: boolean; sent?: boolean }>();
          if (res.headersSent || res.sent) return;
          const status = error instanceof HttpException ? error.getStatus() : 500;
          sendJson(res.status(status), { error: error.message });
        }
      }
      Catch()(Errors);

      class AppModule {}
      Module({
        imports: [SluiceModule.forRoot(options)],
        controllers: [Routes],
        providers: [
          { provide: nest.core.APP_GUARD, useClass: SluiceGuard },
          { provide: nest.core.APP_FILTER, useClass: Errors },
        ],
      })(AppModule);

      const maxHeaderSize = settings.maxHeaderSize ?? 16384;
      const adapter =
        platform === 'express'
          ? new nest.express.ExpressAdapter()
          : new nest.fastify.FastifyAdapter({
              trustProxy: settings.trustProxy ?? false,
              serverFactory: (handler: Parameters<typeof createServer>[1]) =>
                createServer({ maxHeaderSize }, handler),
            } as never);
      const app = await nest.core.NestFactory.create(AppModule, adapter as never, { logger: false });
      const { timeoutMs } = settings;
      // Middleware runs before guards, on Node's own objects on either platform.
      if (timeoutMs !== undefined)
        app.use((req: Req, res: ServerResponse, next: () => void) => {
          if (slow(req.headers))
            setTimeout(() => res.headersSent || res.writeHead(503).end('timeout'), timeoutMs);
          next();
        });
      const { beforeMs } = settings;
      if (beforeMs !== undefined)
        app.use((_req: Req, _res: ServerResponse, next: () => void) => void setTimeout(next, beforeMs));
      if (platform === 'express' && settings.trustProxy)
        app.getHttpAdapter().getInstance().set('trust proxy', settings.trustProxy);
      // A second limiter after the module's: a guard of its own, as a second SluiceModule would give.
      if (settings.second !== undefined)
        app.useGlobalGuards(new SluiceGuard(new RouteLimits(settings.second)));
      if (platform === 'express') {
        await app.init();
        const server = createServer({ maxHeaderSize }, app.getHttpAdapter().getInstance());
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const { port } = server.address() as AddressInfo;
        return {
          url: `http://127.0.0.1:${port}`,
          port,
          control: c,
          close: async () => {
            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
            await app.close();
          },
        };
      }
      await app.listen(0, '127.0.0.1');
      const server = app.getHttpServer();
      const { port } = server.address() as AddressInfo;
      return {
        url: `http://127.0.0.1:${port}`,
        port,
        control: c,
        close: async () => {
          server.closeAllConnections();
          await app.close();
        },
      };
    },
  };
}

/** Nest on Express and on Fastify, from these Nest packages. */
export function nestFrameworks(nest: Nest): Framework[] {
  return [onNest(nest, 'express'), onNest(nest, 'fastify')];
}

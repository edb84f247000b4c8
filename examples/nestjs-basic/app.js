import 'reflect-metadata';
import { Controller, Get, Module, Post, Req } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import { RateLimit, SluiceGuard, SluiceModule } from '@sluice/nestjs';

/**
 * Every route: 100 requests per 15 minutes per client IP (SluiceModule's options, SluiceGuard as the
 * app's guard). POST /login: 5 per minute, counted exactly (sliding log), by its own @RateLimit().
 * On the in-memory store: one process, nothing to set up.
 *
 * Plain JavaScript, so that `node server.js` runs it as it is: each decorator is called as the
 * function that TypeScript's `@Get('/')`, `@Req()` and the like compile to (README.md shows the same
 * app with decorators).
 */
class AppController {
  hello(req) {
    return { hello: 'world', remaining: req.rateLimit?.remaining };
  }

  login() {
    return { welcome: true };
  }
}

/** `@decorator` on a method: each is called with the method's descriptor, the last one first. */
function decorate(target, method, ...decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(target.prototype, method);
  for (const decorator of decorators.reverse()) decorator(target.prototype, method, descriptor);
}

decorate(AppController, 'hello', Get('/'));
Req()(AppController.prototype, 'hello', 0);
decorate(
  AppController,
  'login',
  RateLimit({ name: 'login', limit: 5, window: '1m', algorithm: 'sliding-log' }),
  Post('/login'),
);
Controller()(AppController);

class AppModule {}
Module({
  imports: [SluiceModule.forRoot({ limit: 100, window: '15m' })],
  controllers: [AppController],
  // Behind a proxy, tell Express whom to trust by address (app.set('trust proxy', 'loopback,
  // linklocal, uniquelocal') in server.js, never a hop count), so req.ip
  // (the subject) is the client's address and not the proxy's.
  providers: [{ provide: APP_GUARD, useClass: SluiceGuard }],
})(AppModule);

export function createApp() {
  return NestFactory.create(AppModule, { logger: false });
}

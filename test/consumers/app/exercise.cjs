/**
 * What a consumer does with the published packages, given the modules as its entry loaded them
 * (cjs.cjs through require, esm.mjs through import): so both module systems run the same checks.
 * Prints one TAP-like line per check (a failure's reason follows on `#` lines) and goes on after a failure; resolves to the number of failures.
 */
const assert = require('node:assert/strict');
const { existsSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

/**
 * The installed version of `name`, through `req` (the entry's own require): hono and Koa 2 export no
 * `./package.json`, so the manifest is found above the file the package resolves to.
 */
function versionOf(req, name) {
  for (let dir = dirname(req.resolve(name)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file) && JSON.parse(readFileSync(file, 'utf8')).name === name) {
      return JSON.parse(readFileSync(file, 'utf8')).version;
    }
  }
  return 'unknown';
}

let failures = 0;

async function check(name, fn) {
  try {
    await fn();
    console.log(`ok - ${name}`);
  } catch (error) {
    failures++;
    console.log(`not ok - ${name}`);
    for (const line of String(error?.stack ?? error)
      .split('\n')
      .slice(0, 4))
      console.log(`#   ${line.trim()}`);
  }
}

/** Two requests against a server on loopback: the first allowed, the second denied with the contract's answer. */
async function twoRequests(port, path) {
  const url = `http://127.0.0.1:${port}${path}`;
  const first = await fetch(url);
  assert.equal(first.status, 200, 'first request allowed');
  assert.match(first.headers.get('ratelimit-policy') ?? '', /q=1;w=60/, 'RateLimit-Policy header');
  assert.deepEqual(await first.json(), { remaining: 0 }, 'the decision is on the request');
  const second = await fetch(url);
  assert.equal(second.status, 429, 'second request denied');
  assert.ok(Number(second.headers.get('retry-after')) >= 1, 'Retry-After in whole seconds');
  assert.match(second.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const body = await second.json();
  assert.equal(body.status, 429);
}

async function exercise(m) {
  const { core, testing } = m;
  await check('core: createLimiter on a MemoryStore with a manual clock', async () => {
    const clock = testing.manualClock();
    const limiter = core.createLimiter({
      limit: 2,
      window: '1s',
      store: new core.MemoryStore({ maxKeys: 10, clock }),
    });
    assert.equal((await limiter.consume('a')).allowed, true);
    assert.equal((await limiter.consume('a')).allowed, true);
    const denied = await limiter.consume('a');
    assert.equal(denied.allowed, false);
    assert.ok(denied.retryAfterMs > 0);
    clock.advance(denied.retryAfterMs);
    assert.equal((await limiter.consume('a')).allowed, true);
  });

  await check('core: SluiceConfigError with its code', () => {
    assert.throws(
      () => core.createLimiter({ limit: 0, window: '1s' }),
      (error) => error instanceof core.SluiceConfigError && error.code === 'ERR_SLUICE_INVALID_LIMIT',
    );
  });

  await check(`express ${m.expressVersion}: one request allowed, one denied`, async () => {
    const app = m.express();
    app.use(m.sluiceExpress.rateLimiter({ limit: 1, window: '1m' }));
    app.get('/', (req, res) => res.json({ remaining: req.rateLimit.remaining }));
    const server = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      await twoRequests(server.address().port, '/');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  await check(`fastify ${m.fastifyVersion}: one request allowed, one denied`, async () => {
    const app = m.fastify();
    await app.register(m.sluiceFastify, { limit: 1, window: '1m' });
    app.get('/', async (request) => ({ remaining: request.rateLimit.remaining }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      await twoRequests(app.server.address().port, '/');
    } finally {
      await app.close();
    }
  });

  await check(`hono ${m.honoVersion} on @hono/node-server: one request allowed, one denied`, async () => {
    const app = new m.Hono();
    app.use(m.sluiceHono.rateLimiter({ limit: 1, window: '1m' }));
    app.get('/', (c) => c.json({ remaining: c.get('rateLimit').remaining }));
    const server = await new Promise((resolve) => {
      const s = m.serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
    });
    try {
      await twoRequests(server.address().port, '/');
    } finally {
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  await check('a fetch handler (@sluice/fetch): one request allowed, one denied', async () => {
    const limit = m.sluiceFetch.rateLimiter({
      limit: 1,
      window: '1m',
      getIp: (r) => r.headers.get('x-real-ip') ?? undefined,
    });
    const handler = limit.wrap((request) =>
      Response.json({ remaining: limit.decisionOf(request).remaining }),
    );
    const request = () => new Request('http://localhost/', { headers: { 'x-real-ip': '203.0.113.7' } });
    const first = await handler(request());
    const second = await handler(request());
    if (first.status !== 200 || (await first.json()).remaining !== 0)
      throw new Error(`first: ${first.status}`);
    if (second.status !== 429 || !second.headers.get('ratelimit'))
      throw new Error(`second: ${second.status}`);
  });

  await check(`koa ${m.koaVersion}: one request allowed, one denied`, async () => {
    const app = new m.Koa();
    app.use(m.sluiceKoa.rateLimiter({ limit: 1, window: '1m' }));
    app.use((ctx) => {
      ctx.body = { remaining: ctx.state.rateLimit.remaining };
    });
    const server = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      await twoRequests(server.address().port, '/');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  await check(`nestjs ${m.nestVersion} on Express: one request allowed, one denied`, async () => {
    const { Controller, Get, Module, Req } = m.nestCommon;
    const { SluiceGuard, SluiceModule } = m.sluiceNest;
    // Nest's decorators applied by hand: this consumer is plain JavaScript.
    class AppController {
      root(req) {
        return { remaining: req.rateLimit.remaining };
      }
    }
    Get('/')(
      AppController.prototype,
      'root',
      Object.getOwnPropertyDescriptor(AppController.prototype, 'root'),
    );
    Req()(AppController.prototype, 'root', 0);
    Controller()(AppController);
    class AppModule {}
    Module({
      imports: [SluiceModule.forRoot({ limit: 1, window: '1m' })],
      controllers: [AppController],
      providers: [{ provide: m.nestCore.APP_GUARD, useClass: SluiceGuard }],
    })(AppModule);
    const app = await m.nestCore.NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      await twoRequests(app.getHttpServer().address().port, '/');
    } finally {
      await app.close();
    }
  });

  await check(`ioredis ${m.ioredisVersion}: RedisStore decides on a real Redis`, async () => {
    const url = process.env.REDIS_URL;
    assert.ok(url, 'REDIS_URL is set by run.mjs');
    const client = new m.Redis(url);
    try {
      const limiter = core.createLimiter({
        limit: 1,
        window: '1m',
        name: `consumer-${process.pid}`,
        store: new core.RedisStore({ client }),
      });
      assert.equal((await limiter.consume('a')).allowed, true);
      const denied = await limiter.consume('a');
      assert.equal(denied.allowed, false);
      assert.equal(denied.degraded, undefined, 'decided by Redis, not a fallback');
    } finally {
      client.disconnect();
    }
  });
  return failures;
}

module.exports = { exercise, versionOf };

import { MemoryStore } from '@sluice/core';
import { rateLimiter } from '@sluice/fetch';

/** A clock standing at the start of a minute: `t` reads whole windows. */
const store = () => new MemoryStore({ clock: () => 1_800_000_000_000 });

const getIp = (request: Request) => request.headers.get('x-ip') ?? undefined;
const request = (ip = '203.0.113.7', init?: RequestInit) =>
  new Request('https://example.test/path?k=key-1', { ...init, headers: { 'x-ip': ip, ...init?.headers } });

/** A body the test writes into chunk by chunk, and whose end it decides. */
function stream() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  return { body, controller };
}

describe('options', () => {
  // a0cfbb3 took them, then answered every request 500 ('handler is not a function'; the options fuzz).
  it('refuses a handler or getIp that is not a function, at once', () => {
    expect(() => rateLimiter({ limit: 1, window: '1m', getIp, handler: 'cookie' as never })).toThrow(
      expect.objectContaining({ name: 'SluiceConfigError', code: 'ERR_SLUICE_INVALID_OPTION' }),
    );
    expect(() => rateLimiter({ limit: 1, window: '1m', getIp: 'x-ip' as never })).toThrow(
      expect.objectContaining({ name: 'SluiceConfigError', code: 'ERR_SLUICE_INVALID_OPTION' }),
    );
  });

  it("requires getIp when the subject can be 'ip', naming each platform's source", () => {
    for (const options of [
      { limit: 1, window: '1m' },
      { limit: 1, window: '1m', subject: ['api-key', 'ip'] as const },
    ])
      expect(() => rateLimiter(options as never)).toThrow(
        expect.objectContaining({
          code: 'ERR_SLUICE_INVALID_OPTION',
          option: 'getIp',
          message: expect.stringMatching(/cf-connecting-ip.*remoteAddr.*requestIP.*x-real-ip/),
        }),
      );
  });

  it('needs no getIp for a subject that is never the address', () => {
    const limit = rateLimiter({
      limit: 1,
      window: '1m',
      subject: 'api-key',
      apiKey: { query: 'k' },
      verify: (key) => key,
    });
    expect(limit.limiter).toBeDefined();
  });

  it('names an unknown option with getIp among the valid ones', () => {
    expect(() => rateLimiter({ limit: 1, window: '1m', getIp, getIP: getIp } as never)).toThrow(
      /getIP.*getIp/s,
    );
  });
});

describe('wrap', () => {
  it('answers a refusal with problem+json and the RateLimit fields, without calling the handler', async () => {
    let calls = 0;
    const handler = rateLimiter({
      limit: 1,
      window: '1m',
      algorithm: 'fixed-window',
      getIp,
      store: store(),
    }).wrap(() => {
      calls++;
      return new Response('ok');
    });
    const first = await handler(request());
    expect([first.status, await first.text(), first.headers.get('ratelimit')]).toEqual([
      200,
      'ok',
      '"1-per-1m";r=0;t=60',
    ]);
    const second = await handler(request());
    expect(second.status).toBe(429);
    expect(second.headers.get('content-type')).toBe('application/problem+json');
    expect(second.headers.get('retry-after')).toBe('60');
    expect(await second.json()).toMatchObject({
      status: 429,
      title: 'Too Many Requests',
      policy: '1-per-1m',
      retryAfter: 60,
    });
    expect(calls).toBe(1);
    // Another address has its own limit.
    expect((await handler(request('203.0.113.8'))).status).toBe(200);
  });

  it('sets the fields on a copy when the handler returns immutable headers', async () => {
    const handler = rateLimiter({ limit: 5, window: '1m', getIp, store: store() }).wrap(() =>
      Response.redirect('https://example.test/elsewhere', 302),
    );
    const res = await handler(request());
    expect([res.status, res.headers.get('location'), res.headers.get('ratelimit')]).toEqual([
      302,
      'https://example.test/elsewhere',
      '"5-per-1m";r=4;t=60',
    ]);
  });

  it('passes the platform context to getIp, subject, cost and skip', async () => {
    const seen: unknown[] = [];
    const limit = rateLimiter<[{ ip: string }, string]>({
      limit: 10,
      window: '1m',
      store: store(),
      getIp: (_r, env) => env.ip,
      cost: (_r, env, extra) => {
        seen.push(env, extra);
        return 3;
      },
      skip: (_r, _env, extra) => extra === 'skip',
    });
    const handler = limit.wrap(() => new Response('ok'));
    const res = await handler(request(), { ip: '198.51.100.1' }, 'ctx');
    expect(res.headers.get('ratelimit')).toBe('"10-per-1m";r=7;t=60');
    expect(seen).toEqual([{ ip: '198.51.100.1' }, 'ctx']);
    expect((await handler(request(), { ip: '198.51.100.1' }, 'skip')).headers.get('ratelimit')).toBeNull();
    expect(await limit.subjectOf(request(), { ip: '198.51.100.1' }, '')).toBe('ip:198.51.100.1');
  });

  it('ends a concurrency lease when a streamed body ends, not when the handler returns', async () => {
    const { body, controller } = stream();
    const limit = rateLimiter({ limit: 1, window: '1m', algorithm: 'concurrency', getIp });
    const bodies = [body, 'second', 'third'];
    const handler = limit.wrap(() => new Response(bodies.shift()));
    const streaming = await handler(request());
    expect(streaming.status).toBe(200);
    // The handler has returned; its body is still being written: the lease holds.
    expect((await handler(request())).status).toBe(429);
    const reading = streaming.text();
    controller.enqueue(new TextEncoder().encode('chunk'));
    controller.close();
    expect(await reading).toBe('chunk');
    expect((await handler(request())).status).toBe(200);
  });

  it('ends the lease when the body is cancelled, and when the handler throws (rethrown)', async () => {
    const limit = rateLimiter({ limit: 1, window: '1m', algorithm: 'concurrency', getIp });
    const streaming = await limit.wrap(() => new Response(stream().body))(request());
    expect((await limit.wrap(() => new Response('x'))(request())).status).toBe(429);
    await streaming.body!.cancel();
    const failing = limit.wrap(() => {
      throw new Error('handler broke');
    });
    await expect(failing(request())).rejects.toThrow('handler broke');
    expect((await limit.wrap(() => new Response('x'))(request())).status).toBe(200);
  });

  it('skipFailedRequests refunds by the status once the body is done', async () => {
    const limit = rateLimiter({
      limit: 1,
      window: '1m',
      algorithm: 'fixed-window',
      skipFailedRequests: true,
      getIp,
    });
    const failed = await limit.wrap(() => new Response('no', { status: 500 }))(request());
    await failed.text();
    const ok = await limit.wrap(() => new Response('ok'))(request());
    await ok.text();
    expect((await limit.wrap(() => new Response('ok'))(request())).status).toBe(429);
  });

  it('a custom handler answers the refusal, with the RateLimit fields added', async () => {
    const limit = rateLimiter({
      limit: 1,
      window: '1m',
      algorithm: 'fixed-window',
      getIp,
      store: store(),
      handler: (_request, decision) => Response.json({ wait: decision.retryAfterMs }, { status: 418 }),
    });
    const handler = limit.wrap(() => new Response('ok'));
    await handler(request());
    const res = await handler(request());
    expect([res.status, await res.json(), res.headers.get('retry-after')]).toEqual([
      418,
      { wait: 60000 },
      '60',
    ]);
  });

  it('stacked: the outer limiter keeps the fields of the inner one, which lists both', async () => {
    const shared = store();
    const outer = rateLimiter({ name: 'app', limit: 100, window: '1m', getIp, store: shared });
    const inner = rateLimiter({ name: 'route', limit: 5, window: '1s', getIp, store: shared });
    const res = await outer.wrap(inner.wrap(() => new Response('ok')))(request());
    expect(res.headers.get('ratelimit')).toBe('"100-per-1m";r=99;t=60, "5-per-1s";r=4;t=1');
  });
});

describe('check and decisionOf', () => {
  it('resolves the headers and a finish for a lease, and the decision until the request is done', async () => {
    const limit = rateLimiter({ limit: 1, window: '1m', algorithm: 'concurrency', getIp });
    const req = request();
    const { response, headers, decision, finish } = await limit.check(req);
    expect(response).toBeUndefined();
    expect(headers.get('ratelimit')).toBe('"1-concurrent";r=0');
    expect(limit.decisionOf(req)).toBe(decision);
    expect((await limit.check(request())).response?.status).toBe(429);
    finish!(200);
    expect(limit.decisionOf(req)).toBeUndefined();
    expect((await limit.check(request())).response).toBeUndefined();
  });

  it('a client gone before the decision came back runs no handler and keeps no charge', async () => {
    const aborted = new AbortController();
    const limit = rateLimiter({ limit: 1, window: '1m', getIp });
    aborted.abort();
    let ran = false;
    await limit.wrap(() => {
      ran = true;
      return new Response('ok');
    })(request(undefined, { signal: aborted.signal }));
    expect(ran).toBe(false);
    expect((await limit.check(request())).response).toBeUndefined();
  });
});

/**
 * @sluice/fetch for the shared adapter suite (test/adapters): a plain fetch handler, wrapped, served on
 * Node by @hono/node-server (which passes `{ incoming, outgoing }` after the request, as a platform
 * passes its context). The same handler runs in workerd, Edge Runtime, Deno and Bun in test/runtimes.
 */
import type { IncomingMessage, Server } from 'node:http';
import { serve } from '@hono/node-server';
import type { Decision } from '@sluice/core';
import { type FetchRateLimiter, type RateLimiterOptions, rateLimiter } from '@sluice/fetch';
import { control, type Framework, listening, slow, view } from '../../../test/adapters/framework.js';

type Env = { incoming: IncomingMessage };
type Handler = (request: Request, env: Env) => Promise<Response>;

/**
 * The client behind `hops` proxies: the X-Forwarded-For entry that many places before the connection's
 * address, or the first entry (any number of proxies).
 */
function behindProxies(request: Request, env: Env, hops: number): string | undefined {
  const chain = [
    ...(request.headers.get('x-forwarded-for')?.split(',') ?? []),
    env.incoming.socket.remoteAddress,
  ];
  return chain[Math.max(0, chain.length - 1 - hops)]?.trim();
}

/** What a refusal's own handler answers with: a fetch handler sets its status itself. */
let refusalStatus = 429;
let limiters: FetchRateLimiter<[Env]>[] = [];

const statusOf = (d: Decision) =>
  d.reason === 'ban' || d.reason === 'deny-list' ? 403 : d.reason === 'store-error' ? 503 : refusalStatus;

export const fetchFramework: Framework = {
  name: 'fetch handler (@sluice/fetch)',
  header: (request, h) => (request as Request).headers.get(h) ?? undefined,
  answer: (body) =>
    ((request: Request, d: Decision) =>
      Response.json(body(d, limiters.at(-1)?.decisionOf(request)), { status: statusOf(d) })) as never,
  async start(options, settings = {}) {
    const c = control();
    const hops = settings.trustProxy === true ? Number.POSITIVE_INFINITY : Number(settings.trustProxy ?? 0);
    const getIp = (request: Request, env: Env) => behindProxies(request, env, hops);
    refusalStatus = options.statusCode ?? 429;
    const limiter = rateLimiter<[Env]>({ getIp, ...options } as RateLimiterOptions<[Env]>);
    limiters = [limiter];
    const routes: Record<string, (request: Request) => Response | Promise<Response>> = {
      'GET /': (request) => {
        c.reached.push(Date.now());
        return Response.json(view(limiters.at(-1)!.decisionOf(request)));
      },
      'GET /ok': () => new Response('ok'),
      'GET /fast': () => new Response('fast'),
      'GET /fail': () => new Response('no', { status: 500 }),
      'POST /login': async (request) => {
        if (new URL(request.url).searchParams.get('pw') !== 'right') return new Response('', { status: 401 });
        if (!settings.resetOnLogin) return new Response('');
        await limiter.reset(request, env(request));
        return Response.json({ subject: await limiter.subjectOf(request, env(request)) });
      },
      'GET /slow': () => c.gate.then(() => new Response('slow')),
      'GET /hang': () =>
        new Promise((resolve) => c.held.push((status) => resolve(new Response('late', { status })))),
      'GET /work': async () => {
        await c.work();
        return new Response('failed', { status: 500 });
      },
    };
    const envs = new WeakMap<Request, Env>();
    const env = (request: Request) => envs.get(request)!;
    let handler: Handler = async (request) => {
      const route = routes[`${request.method} ${new URL(request.url).pathname}`];
      return route === undefined ? new Response('not found', { status: 404 }) : route(request);
    };
    if (settings.second !== undefined) {
      const second = rateLimiter<[Env]>({ getIp, ...settings.second } as RateLimiterOptions<[Env]>);
      limiters.push(second);
      handler = second.wrap(handler) as Handler;
    }
    handler = limiter.wrap(handler) as Handler;
    const { beforeMs, timeoutMs } = settings;
    const served: Handler = async (request, e) => {
      envs.set(request, e);
      if (beforeMs !== undefined) await new Promise((resolve) => setTimeout(resolve, beforeMs));
      const answer = handler(request, e).catch((error: Error) =>
        Response.json({ error: error.message }, { status: 500 }),
      );
      if (timeoutMs === undefined || !slow({ 'x-slow': request.headers.get('x-slow') ?? undefined }))
        return answer;
      const timedOut = new Promise<Response>((resolve) =>
        setTimeout(() => resolve(new Response('timeout', { status: 503 })), timeoutMs),
      );
      return Promise.race([answer, timedOut]);
    };
    const server = serve({
      fetch: served as never,
      hostname: '127.0.0.1',
      port: 0,
      serverOptions: { maxHeaderSize: settings.maxHeaderSize ?? 16384 },
    }) as Server;
    return listening(server, c);
  },
};

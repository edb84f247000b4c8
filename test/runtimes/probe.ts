/**
 * What test/runtimes/runtimes.test.ts runs on every runtime and compares with Node's run: decision
 * traces of every algorithm, keys and credential hashes, client-address subjects (IPv6 grouping,
 * mapped IPv4, ports), address lists, and HTTP exchanges through @sluice/fetch and @sluice/hono. A
 * manual clock makes every answer exact, so any difference is the runtime's.
 */
import { createLimiter, MemoryStore } from '@sluice/core';
import { rateLimiter } from '@sluice/fetch';
import { algorithmNames } from '../../packages/core/src/algorithms/index.js';
import { digest, encodeSubject, policyNamespace } from '../../packages/core/src/keys.js';
import { scriptSha } from '../../packages/core/src/stores/redis/script.js';
import { honoResponses } from '../../packages/hono/test/runtime-probe.js';

/** The start of a minute: `t` and Retry-After read whole windows. */
const T0 = 1_800_000_000_000;

async function traces(): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const algorithm of algorithmNames) {
    let now = T0;
    const limiter = createLimiter({
      policies: [
        { limit: 3, window: '10s', algorithm, ...(algorithm === 'leaky-bucket' ? { delay: false } : {}) },
        { limit: 5, window: '1m' },
      ],
      store: new MemoryStore({ clock: () => now }),
    });
    for (let i = 0; i < 8; i++) {
      const d = await limiter.consume('subject', { cost: 1 + (i % 2) });
      out.push([algorithm, i, d.allowed, d.remaining, d.resetMs, d.retryAfterMs, d.policy]);
      if (i === 5) await d.release?.();
      now += 1700;
    }
  }
  return out;
}

function keys(): unknown[] {
  const subjects = ['user-42', 'a{b}c:d', 'é😀', 'x'.repeat(100), '\ud83d'];
  return [
    scriptSha,
    subjects.map((s) => [encodeSubject(s), digest(s)]),
    policyNamespace('sluice', 'api:v1', '100-per-15m', 'sw'),
  ];
}

const store = () => new MemoryStore({ clock: () => T0 });
const ipOf = (request: Request) => request.headers.get('x-ip') ?? undefined;

async function subjects(): Promise<unknown[]> {
  const limit = rateLimiter({ limit: 1, window: '1m', getIp: ipOf, validate: false });
  const keyed = rateLimiter({ limit: 1, window: '1m', subject: 'api-key', validate: false });
  const secret = rateLimiter({
    limit: 1,
    window: '1m',
    subject: 'token',
    credentialSecret: 's3cret',
    validate: false,
  });
  const out: unknown[] = [];
  for (const ip of [
    '203.0.113.7',
    '2001:db8:1:2:3:4:5:6',
    '::ffff:10.1.2.3',
    '[2001:db8::1]:443',
    '203.0.113.7:51000',
  ])
    out.push(await limit.subjectOf(new Request('http://x/', { headers: { 'x-ip': ip } })));
  out.push(await keyed.subjectOf(new Request('http://x/', { headers: { 'x-api-key': 'key-123' } })));
  out.push(
    await secret.subjectOf(new Request('http://x/', { headers: { authorization: 'Bearer tok-456' } })),
  );
  return out;
}

/** Status, the fields Sluice writes, and the body of a response. */
async function seen(response: Response): Promise<unknown[]> {
  const fields = ['ratelimit', 'ratelimit-policy', 'retry-after'].map((f) => response.headers.get(f));
  // The content type of a refusal only: Bun gives `new Response('ok')` none until it is sent.
  const type = response.status >= 400 ? response.headers.get('content-type') : 'handler';
  return [response.status, ...fields, type, await response.text()];
}

async function exchanges(): Promise<unknown[]> {
  const out: unknown[] = [];
  const limit = rateLimiter({
    limit: 2,
    window: '1m',
    algorithm: 'fixed-window',
    getIp: ipOf,
    store: store(),
    allowList: ['10.0.0.0/8', '2001:db8::/32'],
    denyList: ['192.0.2.0/24'],
  });
  const handler = limit.wrap(() => new Response('ok'));
  for (const ip of ['203.0.113.7', '203.0.113.7', '203.0.113.7', '10.9.8.7', '2001:db8::5', '192.0.2.1'])
    out.push(await seen(await handler(new Request('http://x/', { headers: { 'x-ip': ip } }))));
  // A lease held while the body streams, given back once it has been read.
  const leased = rateLimiter({
    limit: 1,
    window: '1m',
    algorithm: 'concurrency',
    getIp: ipOf,
    store: store(),
  });
  let write!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      write = c;
    },
  });
  const bodies = [body, 'second', 'third'];
  const streamed = leased.wrap(() => new Response(bodies.shift()));
  const request = () => new Request('http://x/', { headers: { 'x-ip': '203.0.113.9' } });
  const first = await streamed(request());
  out.push((await streamed(request())).status);
  const text = first.text();
  write.enqueue(new TextEncoder().encode('streamed'));
  write.close();
  out.push(await text, (await streamed(request())).status);
  for (const response of await honoResponses(store())) out.push(await seen(response));
  return out;
}

/** Everything, as JSON. */
export async function handle(_request: Request): Promise<Response> {
  const result = {
    traces: await traces(),
    keys: keys(),
    subjects: await subjects(),
    exchanges: await exchanges(),
  };
  return new Response(JSON.stringify(result), { headers: { 'content-type': 'application/json' } });
}

export default { fetch: handle };

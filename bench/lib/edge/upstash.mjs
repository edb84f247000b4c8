/**
 * The edge suite's job done with @upstash/ratelimit as its documentation shows it: two limiters, both
 * called for each request (each is one request to Redis), the RateLimit fields of the tighter one and a
 * 429 body written by the app, since the library answers with data only.
 */
import { Ratelimit } from '@upstash/ratelimit';

export function upstashHandler(redis, { perSecond, perMinute }) {
  const limits = [
    new Ratelimit({ redis, prefix: 'second', limiter: Ratelimit.slidingWindow(perSecond, '1 s') }),
    new Ratelimit({ redis, prefix: 'minute', limiter: Ratelimit.slidingWindow(perMinute, '1 m') }),
  ];
  const policy = `"second";q=${perSecond};w=1, "minute";q=${perMinute};w=60`;
  return async (request) => {
    const ip = request.headers.get('cf-connecting-ip') ?? 'anonymous';
    const results = await Promise.all(limits.map((limit) => limit.limit(ip)));
    const tightest = results.reduce((a, b) => (b.remaining < a.remaining ? b : a));
    const seconds = (at) => Math.max(0, Math.ceil((at - Date.now()) / 1000));
    const headers = {
      'RateLimit-Policy': policy,
      RateLimit: `"${results.indexOf(tightest) === 0 ? 'second' : 'minute'}";r=${tightest.remaining};t=${seconds(tightest.reset)}`,
    };
    const denied = results.find((r) => !r.success);
    if (denied !== undefined) {
      const retryAfter = Math.max(1, seconds(denied.reset));
      return Response.json(
        { error: 'Too Many Requests', retryAfter },
        { status: 429, headers: { ...headers, 'Retry-After': String(retryAfter) } },
      );
    }
    const response = new Response('ok');
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  };
}

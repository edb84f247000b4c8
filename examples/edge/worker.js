// A Cloudflare Worker (wrangler deploy). Cloudflare sets cf-connecting-ip to the client's address.
import { rateLimiter } from '@sluice/fetch';

const limit = rateLimiter({
  limit: 100,
  window: '1m',
  getIp: (request) => request.headers.get('cf-connecting-ip') ?? undefined,
});

export default {
  fetch: limit.wrap(
    async (request, _env, _ctx) => new Response(`hello from ${new URL(request.url).pathname}`),
  ),
};

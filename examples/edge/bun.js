// bun run bun.js   (Bun reads the client's address from the server: server.requestIP(request))
import { rateLimiter } from '@sluice/fetch';

const limit = rateLimiter({
  limit: 10,
  window: '1m',
  getIp: (request, server) => server.requestIP(request)?.address,
});

const server = Bun.serve({
  port: Number(process.env.PORT ?? 3000),
  hostname: '127.0.0.1',
  fetch: limit.wrap(() => new Response('hello from Bun')),
});
console.log(`listening on ${server.url}`);

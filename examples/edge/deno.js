// deno run --allow-net deno.js   (Deno reads the client's address from the connection: info.remoteAddr)
import { rateLimiter } from '@sluice/fetch';

const limit = rateLimiter({
  limit: 10,
  window: '1m',
  getIp: (_request, info) => info.remoteAddr.hostname,
});

const port = Number(Deno.env.get('PORT') ?? 8000);
Deno.serve(
  { port, hostname: '127.0.0.1' },
  limit.wrap(() => new Response('hello from Deno')),
);

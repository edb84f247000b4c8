// deno run --allow-net hono-deno.js   (Hono on Deno: c.env is the connection info Deno.serve passes)
import { rateLimiter } from '@sluice/hono';
import { Hono } from 'hono';

const app = new Hono();
app.use(rateLimiter({ limit: 10, window: '1m', getIp: (c) => c.env.remoteAddr.hostname }));
app.get('/', (c) => c.text('hello from Hono on Deno'));

const port = Number(Deno.env.get('PORT') ?? 8000);
Deno.serve({ port, hostname: '127.0.0.1' }, app.fetch);

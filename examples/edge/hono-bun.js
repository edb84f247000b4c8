// bun run hono-bun.js   (Hono on Bun: c.env is the server Bun.serve passes, which knows the client's address)
import { rateLimiter } from '@sluice/hono';
import { Hono } from 'hono';

const app = new Hono();
app.use(rateLimiter({ limit: 10, window: '1m', getIp: (c) => c.env.requestIP(c.req.raw)?.address }));
app.get('/', (c) => c.text('hello from Hono on Bun'));

const server = Bun.serve({ port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1', fetch: app.fetch });
console.log(`listening on ${server.url}`);

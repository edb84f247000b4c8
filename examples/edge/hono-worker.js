// A Cloudflare Worker with Hono (wrangler deploy). Cloudflare sets cf-connecting-ip to the client's address.
import { rateLimiter } from '@sluice/hono';
import { Hono } from 'hono';

const app = new Hono();
app.use(rateLimiter({ limit: 100, window: '1m', getIp: (c) => c.req.header('cf-connecting-ip') }));
app.get('/*', (c) => c.text(`hello from ${c.req.path}`));

export default app;

import { rateLimiter } from '@sluice/hono';
import { Hono } from 'hono';

// app.use(rateLimiter), not called, answered every request 500 `env: unknown option` (5fcb38f).
test('app.use(rateLimiter) uncalled: each request fails saying to call it: rateLimiter({...})', async () => {
  const app = new Hono();
  app.onError((error, c) => c.json({ error: error.message }, 500));
  app.use(rateLimiter as never);
  app.get('/', (c) => c.text('ok'));
  const res = await app.request('/');
  expect(res.status).toBe(500);
  expect(((await res.json()) as { error: string }).error).toContain('call it: app.use(rateLimiter({');
});

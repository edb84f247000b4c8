import { rateLimiter } from '@sluice/koa';
import Koa3 from 'koa';
import Koa2 from 'koa2';
import request from 'supertest';
import { errorsAsJson } from './framework.js';

// app.use(rateLimiter), not called, answered every request 500 `request: unknown option` (5fcb38f).
describe.each([
  ['Koa 3', Koa3],
  ['Koa 2', Koa2],
])('%s: app.use(rateLimiter) uncalled', (_, Make) => {
  test('each request fails saying to call it: rateLimiter({...})', async () => {
    const app = new Make();
    app.use(errorsAsJson);
    app.use(rateLimiter as never);
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    const res = await request(app.callback()).get('/');
    expect(res.status).toBe(500);
    expect(res.body.error).toContain('call it: app.use(rateLimiter({');
  });
});

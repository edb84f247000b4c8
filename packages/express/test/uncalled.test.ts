import { rateLimiter } from '@sluice/express';
import request from 'supertest';
import { errorsAsJson, expressVersions } from './support.js';

// app.use(rateLimiter), not called, answered every request 500 `_events: unknown option` (5fcb38f).
describe.each(expressVersions)('%s: app.use(rateLimiter) uncalled', (_, makeApp) => {
  test('each request fails saying to call it: rateLimiter({...})', async () => {
    const app = makeApp();
    app.use(rateLimiter as never);
    app.get('/', (_req, res) => res.send('ok'));
    errorsAsJson(app);
    const res = await request(app).get('/');
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).toContain('call it: app.use(rateLimiter({');
    expect(JSON.stringify(res.body)).not.toContain('_events');
  });
});

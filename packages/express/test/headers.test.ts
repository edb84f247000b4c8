import { MemoryStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import request from 'supertest';
import { HEADER_CASES_NOW, headerCases } from '../../../test/fixtures/header-cases.js';
import { expressVersions } from './support.js';

describe.each(expressVersions)('%s: header strings from the shared table', (_, makeApp) => {
  test.each(headerCases.map((c) => [c.title, c] as const))('%s', async (_title, c) => {
    const app = makeApp();
    const store = new MemoryStore({ clock: () => HEADER_CASES_NOW });
    app.use(rateLimiter({ ...c.options, store }));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    let last: request.Response | undefined;
    for (let i = 0; i < c.requests; i++) last = await request(app).get('/');
    const res = last!;
    expect(res.status).toBe(c.status);
    for (const [name, expected] of Object.entries(c.headers)) {
      const actual = res.headers[name];
      if (expected === null) expect([name, actual]).toEqual([name, undefined]);
      else if (expected instanceof RegExp) expect(actual).toMatch(expected);
      else expect([name, actual]).toEqual([name, expected]);
    }
    if (c.body !== undefined) expect(JSON.parse(res.text)).toMatchObject(c.body);
  });
});

import { createLimiter, ErrorCodes, MemoryStore, RedisStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import Redis from 'ioredis';
import request from 'supertest';
import { expressVersions } from '../../packages/express/test/support.js';
import { recordWarnings } from '../support/warnings.js';

// Review 28: two rateLimiter() of the same options on one shared store, neither named, are both
// 'default' and silently share one counter: /a three times, then /b is refused. NAME_REUSE warned
// only of other policies. express-rate-limit 8 warns of a store reused across limiters
// (ERR_ERL_STORE_REUSE). Failed on ae2676c (no warning).
describe('two limiters on one store, neither given a name', () => {
  const warnings = recordWarnings();

  test('rateLimiter(): they share one counter, and NAME_REUSE says so once', async () => {
    const store = new MemoryStore();
    const app = expressVersions[0]![1]();
    app.get('/a', rateLimiter({ store, limit: 3, window: '1m', validate: false }), (_req, res) => {
      res.send('a');
    });
    app.get('/b', rateLimiter({ store, limit: 3, window: '1m', validate: false }), (_req, res) => {
      res.send('b');
    });
    rateLimiter({ store, limit: 3, window: '1m', validate: false });
    expect(warnings.codes).toEqual([ErrorCodes.NAME_REUSE]);
    expect(warnings.messages[0]).toContain('"default"');
    expect(warnings.messages[0]).toContain('Give each its own name');
    expect(warnings.messages[0]).toContain('one limiter');
    // What it warns of: the counter is one.
    for (let i = 0; i < 3; i++) expect((await request(app).get('/a')).status).toBe(200);
    expect((await request(app).get('/b')).status).toBe(429);
  });

  test('createLimiter likewise', () => {
    const store = new MemoryStore();
    createLimiter({ store, limit: 3, window: '1m' });
    createLimiter({ store, limit: 3, window: '1m' });
    expect(warnings.codes).toEqual([ErrorCodes.NAME_REUSE]);
  });

  // A hostile review of fdd233c: the README writes `new RedisStore({ client })` in each limiter, and two
  // such stores of one client share keys in Redis, but the check went by store object: no warning.
  test('two RedisStores of one client, one per limiter as the README writes it: warned too', () => {
    const client = new Redis({ lazyConnect: true });
    createLimiter({ store: new RedisStore({ client }), limit: 3, window: '1m' });
    createLimiter({ store: new RedisStore({ client }), limit: 3, window: '1m' });
    // Another client: other keys as far as this process can tell.
    createLimiter({
      store: new RedisStore({ client: new Redis({ lazyConnect: true }) }),
      limit: 3,
      window: '1m',
    });
    expect(warnings.codes).toEqual([ErrorCodes.NAME_REUSE]);
    expect(warnings.messages[0]).toContain('stores of one client');
  });

  test('sharing on purpose does not warn: one limiter on two routes, or one name given to both', () => {
    const store = new MemoryStore();
    const shared = rateLimiter({ store, limit: 3, window: '1m', validate: false });
    expressVersions[0]![1]().get('/a', shared).get('/b', shared);
    createLimiter({ store, name: 'login', limit: 3, window: '1m' });
    createLimiter({ store, name: 'login', limit: 3, window: '1m' });
    // Each limiter's own store (the default): nothing shared.
    createLimiter({ limit: 3, window: '1m' });
    createLimiter({ limit: 3, window: '1m' });
    // Other prefixes: other keys.
    createLimiter({ store, prefix: 'other', limit: 3, window: '1m' });
    expect(warnings.codes).toEqual([]);
  });
});

import { createServer } from 'node:http';
import { MemoryStore } from '@sluice/core';
import { rateLimiter } from '@sluice/express';
import type { Express } from 'express';
import request from 'supertest';
import { recording } from '../../../test/fixtures/stores.js';
import { errorsAsJson, expressVersions } from './support.js';

describe.each(expressVersions)('%s: who is limited', (_, makeApp) => {
  function appWith(options: Parameters<typeof rateLimiter>[0], trustProxy = false): Express {
    const app = makeApp();
    app.set('trust proxy', trustProxy);
    app.use(rateLimiter(options));
    app.get('/', (req, res) => {
      res.json({ ip: req.ip, remaining: req.rateLimit?.remaining });
    });
    errorsAsJson(app);
    return app;
  }

  const get = (app: Express, headers: Record<string, string> = {}) => request(app).get('/').set(headers);

  /** The statuses of one request claiming each X-Forwarded-For address in turn. */
  async function forwardedFor(app: Express, ips: string[]): Promise<number[]> {
    const out: number[] = [];
    for (const ip of ips) out.push((await get(app, { 'x-forwarded-for': ip })).status);
    return out;
  }

  describe('trust proxy', () => {
    test('off: a spoofed X-Forwarded-For does not change the subject', async () => {
      const app = appWith({ limit: 2, window: '1m' });
      expect(await forwardedFor(app, ['1.1.1.1', '2.2.2.2', '3.3.3.3'])).toEqual([200, 200, 429]);
    });

    test('on: X-Forwarded-For is the client', async () => {
      const app = appWith({ limit: 1, window: '1m' }, true);
      expect(await forwardedFor(app, ['1.1.1.1', '2.2.2.2', '1.1.1.1'])).toEqual([200, 200, 429]);
    });
  });

  describe('IPv6 and IPv4-mapped addresses', () => {
    test('addresses in one /64 share a limit; the next /64 does not', async () => {
      const app = appWith({ limit: 2, window: '1m' }, true);
      expect(
        await forwardedFor(app, [
          '2001:db8:1:2::1',
          '2001:db8:1:2:ffff:eeee:dddd:cccc',
          '2001:0db8:0001:0002::abcd',
          '2001:db8:1:3::1',
        ]),
      ).toEqual([200, 200, 429, 200]);
    });

    test('ipv6Subnet: false limits each address alone; 48 groups wider', async () => {
      const single = appWith({ limit: 1, window: '1m', ipv6Subnet: false }, true);
      expect(await forwardedFor(single, ['2001:db8::1', '2001:db8::2', '2001:db8:0:0::1'])).toEqual([
        200, 200, 429,
      ]);
      const wide = appWith({ limit: 1, window: '1m', ipv6Subnet: 48 }, true);
      expect(await forwardedFor(wide, ['2001:db8:1:1::1', '2001:db8:1:ffff::1'])).toEqual([200, 429]);
    });

    test('::ffff:1.2.3.4 and 1.2.3.4 share a limit', async () => {
      const app = appWith({ limit: 2, window: '1m' }, true);
      expect(await forwardedFor(app, ['1.2.3.4', '::ffff:1.2.3.4', '1.2.3.4', '::ffff:1.2.3.5'])).toEqual([
        200, 200, 429, 200,
      ]);
    });
  });

  describe('API keys and bearer tokens', () => {
    test('api-key: each key its own limit; no key falls back to the IP', async () => {
      const app = appWith({ limit: 1, window: '1m', subject: 'api-key' });
      expect((await get(app, { 'x-api-key': 'a' })).status).toBe(200);
      expect((await get(app, { 'x-api-key': 'a' })).status).toBe(429);
      expect((await get(app, { 'x-api-key': 'b' })).status).toBe(200);
      expect((await get(app)).status).toBe(200);
      expect((await get(app)).status).toBe(429);
    });

    test('apiKey: another header, or the query string', async () => {
      const app = appWith({
        limit: 1,
        window: '1m',
        subject: 'api-key',
        apiKey: { header: 'X-Client-Key', query: 'key' },
      });
      expect((await get(app, { 'x-client-key': 'a' })).status).toBe(200);
      expect((await request(app).get('/?key=a')).status).toBe(429);
      expect((await request(app).get('/?key=b')).status).toBe(200);
      expect((await request(app).get('/?key=b&key=c')).status).toBe(429);
    });

    test('token: the bearer token is the subject', async () => {
      const app = appWith({ limit: 1, window: '1m', subject: 'token' });
      expect((await get(app, { authorization: 'Bearer t1' })).status).toBe(200);
      expect((await get(app, { authorization: 'Bearer t1' })).status).toBe(429);
      expect((await get(app, { authorization: 'Bearer t2' })).status).toBe(200);
    });

    test('verify: keys of one account share its limit; unknown keys count as absent', async () => {
      const accounts: Record<string, string> = { 'key-1': 'acme', 'key-2': 'acme', 'tok-1': 'acme' };
      const app = appWith({
        limit: 3,
        window: '1m',
        subject: ['api-key', 'token', 'ip'],
        verify: async (credential) => accounts[credential] ?? null,
      });
      expect((await get(app, { 'x-api-key': 'key-1' })).body.remaining).toBe(2);
      expect((await get(app, { 'x-api-key': 'key-2' })).body.remaining).toBe(1);
      expect((await get(app, { authorization: 'Bearer tok-1' })).body.remaining).toBe(0);
      expect((await get(app, { 'x-api-key': 'key-1' })).status).toBe(429);
      // An unknown key falls through to the IP, which still has its own quota.
      expect((await get(app, { 'x-api-key': 'nope' })).body.remaining).toBe(2);
    });

    test('rotating random unverified keys does not escape the IP limit behind them', async () => {
      const app = appWith({
        limit: 5,
        window: '1m',
        subject: ['api-key', 'ip'],
        verify: (credential) => (credential === 'real-key' ? 'customer-1' : null),
      });
      const codes: number[] = [];
      for (let i = 0; i < 20; i++) {
        codes.push((await get(app, { 'x-api-key': `random-${i}-${Math.random()}` })).status);
      }
      expect(codes.filter((c) => c === 200)).toHaveLength(5);
      expect(codes.slice(5).every((c) => c === 429)).toBe(true);
      // The real customer is unaffected.
      expect((await get(app, { 'x-api-key': 'real-key' })).status).toBe(200);
    });

    test('the raw key never reaches the store', async () => {
      const store = recording(new MemoryStore());
      const app = appWith({ limit: 5, window: '1m', subject: ['api-key', 'token'], store });
      await get(app, { 'x-api-key': 'sk_live_SECRET' });
      await get(app, { authorization: 'Bearer tok_SECRET' });
      expect(store.subjects.size).toBe(2);
      for (const subject of store.subjects) expect(subject).not.toContain('SECRET');
    });
  });

  describe('hostile input', () => {
    test('a 64 kB API key: hashed, limited, no crash', async () => {
      const store = recording(new MemoryStore());
      const app = appWith({ limit: 2, window: '1m', subject: ['api-key', 'ip'], store });
      // Node refuses headers over 16 kB by default; this server lets the key reach the middleware.
      const server = createServer({ maxHeaderSize: 256 * 1024 }, app);
      const key = 'k'.repeat(64 * 1024);
      expect((await request(server).get('/').set('x-api-key', key)).status).toBe(200);
      expect((await request(server).get('/').set('x-api-key', key)).status).toBe(200);
      expect((await request(server).get('/').set('x-api-key', key)).status).toBe(429);
      expect(store.subjects.size).toBe(1);
      const [subject] = store.subjects;
      expect(subject!.length).toBeLessThan(100);
      // With Node's default header limit the request never reaches Express, and the server lives on.
      const defaultServer = createServer(app);
      expect((await request(defaultServer).get('/').set('x-api-key', key)).status).toBe(431);
      expect((await request(defaultServer).get('/')).status).toBe(200);
    });

    test('malformed Authorization headers count as no token: the IP limit applies', async () => {
      const app = appWith({ limit: 3, window: '1m', subject: ['token', 'ip'] });
      const bad = [
        'Bearer',
        'Bearer a b c',
        'Basic Zm9vOmJhcg==',
        'Bearer \u00ff\u00fe',
        `Bearer ${'x'.repeat(5000)} y`,
      ];
      const codes: number[] = [];
      for (const value of bad) codes.push((await get(app, { authorization: value })).status);
      expect(codes).toEqual([200, 200, 200, 429, 429]);
    });

    test('1,000 distinct X-Forwarded-For values with trust proxy off: one subject, one limit', async () => {
      const store = recording(new MemoryStore());
      const app = appWith({ limit: 10, window: '1m', store });
      const server = app.listen(0, '127.0.0.1');
      try {
        const agent = request.agent(server);
        const codes: number[] = [];
        for (let i = 0; i < 1000; i++) {
          const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
          codes.push((await agent.get('/').set('x-forwarded-for', ip)).status);
        }
        expect(codes.filter((c) => c === 200)).toHaveLength(10);
        expect(store.subjects.size).toBe(1);
      } finally {
        server.close();
      }
    });
  });
});

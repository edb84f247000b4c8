import { MemoryStore } from '@sluice/core';
import request from 'supertest';
import { stillStore } from '../../support/clock.js';
import { expectOnlyWarnings, recordWarnings } from '../../support/warnings.js';
import type { Framework } from '../framework.js';
import { get, recording, serving } from '../support.js';

/** Who is limited (API.md: subject, apiKey, verify, ipv6Subnet), the same on every framework. */
export function subjects(framework: Framework): void {
  // Spoofed X-Forwarded-For, trust proxy = true and unverified credentials are what these cases try:
  // their warnings are expected (validation-warnings.test.ts asserts each).
  expectOnlyWarnings(
    'ERR_SLUICE_FORWARDED_IGNORED',
    'ERR_SLUICE_TRUST_PROXY_ALL',
    'ERR_SLUICE_UNVERIFIED_CREDENTIAL',
  );
  const start = serving(framework);

  /** The statuses of one request claiming each X-Forwarded-For address in turn. */
  async function forwardedFor(app: Awaited<ReturnType<typeof start>>, ips: string[]): Promise<number[]> {
    const out: number[] = [];
    for (const ip of ips) out.push((await get(app, '/', { 'x-forwarded-for': ip })).status);
    return out;
  }

  describe('proxies', () => {
    test('not trusted: a spoofed X-Forwarded-For does not change the subject', async () => {
      const app = await start({ limit: 2, window: '1m' });
      expect(await forwardedFor(app, ['1.1.1.1', '2.2.2.2', '3.3.3.3'])).toEqual([200, 200, 429]);
    });

    test('trusted the framework’s way: X-Forwarded-For is the client', async () => {
      const app = await start({ limit: 1, window: '1m' }, { trustProxy: true });
      expect(await forwardedFor(app, ['1.1.1.1', '2.2.2.2', '1.1.1.1'])).toEqual([200, 200, 429]);
    });
  });

  describe('IPv6 and IPv4-mapped addresses', () => {
    test('addresses in one /64 share a limit; the next /64 does not', async () => {
      const app = await start({ limit: 2, window: '1m' }, { trustProxy: true });
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
      const single = await start({ limit: 1, window: '1m', ipv6Subnet: false }, { trustProxy: true });
      expect(await forwardedFor(single, ['2001:db8::1', '2001:db8::2', '2001:db8:0:0::1'])).toEqual([
        200, 200, 429,
      ]);
      const wide = await start({ limit: 1, window: '1m', ipv6Subnet: 48 }, { trustProxy: true });
      expect(await forwardedFor(wide, ['2001:db8:1:1::1', '2001:db8:1:ffff::1'])).toEqual([200, 429]);
    });

    test('::ffff:1.2.3.4 and 1.2.3.4 share a limit', async () => {
      const app = await start({ limit: 2, window: '1m' }, { trustProxy: true });
      expect(await forwardedFor(app, ['1.2.3.4', '::ffff:1.2.3.4', '1.2.3.4', '::ffff:1.2.3.5'])).toEqual([
        200, 200, 429, 200,
      ]);
    });
  });

  // 6cc09fa took `203.0.113.66:51000` (a proxy that appends the client's port, as Azure Application
  // Gateway does) for a subject of its own per connection, and denyList: ['203.0.113.66'] let it through.
  describe('addresses written with a port (API.md r3)', () => {
    const { codes } = recordWarnings();
    const notAnAddress = () => codes.filter((c) => c === 'ERR_SLUICE_NOT_AN_ADDRESS');

    test('an IPv4 address with a port, and [IPv6]:port, are that address', async () => {
      const app = await start({ limit: 2, window: '1m' }, { trustProxy: true });
      const ports = ['203.0.113.66:51000', '203.0.113.66:51001', '203.0.113.66:51002', '203.0.113.66'];
      expect(await forwardedFor(app, ports)).toEqual([200, 200, 429, 429]);
      const v6 = ['[2001:db8::1]:443', '[2001:db8::2]:444', '2001:db8::3'];
      expect(await forwardedFor(app, v6)).toEqual([200, 200, 429]);
      expect(notAnAddress()).toEqual([]);
    });

    test('denyList matches the address behind the port', async () => {
      const app = await start({ limit: 5, window: '1m', denyList: ['203.0.113.66'] }, { trustProxy: true });
      expect(await forwardedFor(app, ['203.0.113.66:51000', '[203.0.113.66]:80', '203.0.113.67:1'])).toEqual([
        403, 403, 200,
      ]);
    });

    test('what is no IP address is warned of once, with a code, and still limited', async () => {
      const app = await start({ limit: 1, window: '1m' }, { trustProxy: true });
      expect(await forwardedFor(app, ['203.0.113.07', '203.0.113.07', '3405803783'])).toEqual([
        200, 429, 200,
      ]);
      expect(notAnAddress()).toEqual(['ERR_SLUICE_NOT_AN_ADDRESS']);
    });
  });

  describe('API keys, bearer tokens, functions', () => {
    test('api-key: each key its own limit; no key falls back to the IP', async () => {
      const app = await start({ limit: 1, window: '1m', subject: 'api-key' });
      expect((await get(app, '/', { 'x-api-key': 'a' })).status).toBe(200);
      expect((await get(app, '/', { 'x-api-key': 'a' })).status).toBe(429);
      expect((await get(app, '/', { 'x-api-key': 'b' })).status).toBe(200);
      expect((await get(app)).status).toBe(200);
      expect((await get(app)).status).toBe(429);
    });

    test('apiKey: another header, or the query string (its first value)', async () => {
      const app = await start({
        limit: 1,
        window: '1m',
        subject: 'api-key',
        apiKey: { header: 'X-Client-Key', query: 'key' },
      });
      expect((await get(app, '/', { 'x-client-key': 'a' })).status).toBe(200);
      expect((await get(app, '/?key=a')).status).toBe(429);
      expect((await get(app, '/?key=b')).status).toBe(200);
      expect((await get(app, '/?key=b&key=c')).status).toBe(429);
    });

    test('token: the bearer token is the subject', async () => {
      const app = await start({ limit: 1, window: '1m', subject: 'token' });
      expect((await get(app, '/', { authorization: 'Bearer t1' })).status).toBe(200);
      expect((await get(app, '/', { authorization: 'Bearer t1' })).status).toBe(429);
      expect((await get(app, '/', { authorization: 'Bearer t2' })).status).toBe(200);
    });

    test('verify: keys of one account share its limit; unknown keys count as absent', async () => {
      const accounts: Record<string, string> = { 'key-1': 'acme', 'key-2': 'acme', 'tok-1': 'acme' };
      const app = await start({
        limit: 3,
        window: '1m',
        subject: ['api-key', 'token', 'ip'],
        verify: async (credential) => accounts[credential] ?? null,
      });
      expect((await get(app, '/', { 'x-api-key': 'key-1' })).body.remaining).toBe(2);
      expect((await get(app, '/', { 'x-api-key': 'key-2' })).body.remaining).toBe(1);
      expect((await get(app, '/', { authorization: 'Bearer tok-1' })).body.remaining).toBe(0);
      expect((await get(app, '/', { 'x-api-key': 'key-1' })).status).toBe(429);
      // An unknown key falls through to the IP, which still has its own quota.
      expect((await get(app, '/', { 'x-api-key': 'nope' })).body.remaining).toBe(2);
    });

    test('a function subject, and an array tried in order', async () => {
      const app = await start({
        limit: 1,
        window: '1m',
        subject: [(req) => framework.header(req, 'x-user'), 'ip'],
      });
      expect((await get(app, '/', { 'x-user': 'u1' })).status).toBe(200);
      expect((await get(app, '/', { 'x-user': 'u1' })).status).toBe(429);
      expect((await get(app, '/', { 'x-user': 'u2' })).status).toBe(200);
      expect((await get(app)).status).toBe(200);
      expect((await get(app)).status).toBe(429);
    });

    test('rotating random unverified keys does not escape the IP limit behind them', async () => {
      const app = await start({
        limit: 5,
        window: '1m',
        subject: ['api-key', 'ip'],
        verify: (credential) => (credential === 'real-key' ? 'customer-1' : null),
      });
      const codes: number[] = [];
      for (let i = 0; i < 20; i++) {
        codes.push((await get(app, '/', { 'x-api-key': `random-${i}-${Math.random()}` })).status);
      }
      expect(codes.filter((c) => c === 200)).toHaveLength(5);
      expect(codes.slice(5).every((c) => c === 429)).toBe(true);
      expect((await get(app, '/', { 'x-api-key': 'real-key' })).status).toBe(200);
    });

    test('the raw key never reaches the store', async () => {
      const store = recording(new MemoryStore());
      const app = await start({ limit: 5, window: '1m', subject: ['api-key', 'token'], store });
      await get(app, '/', { 'x-api-key': 'sk_live_SECRET' });
      await get(app, '/', { authorization: 'Bearer tok_SECRET' });
      expect(store.subjects.size).toBe(2);
      for (const subject of store.subjects) expect(subject).not.toContain('SECRET');
    });
  });

  describe('hostile input', () => {
    test('a 64 kB API key: hashed, limited, no crash; over Node’s header limit, 431 and the server lives on', async () => {
      const store = recording(new MemoryStore());
      const options = { limit: 2, window: '1m', subject: ['api-key', 'ip'] as const, store };
      const app = await start({ ...options, subject: [...options.subject] }, { maxHeaderSize: 256 * 1024 });
      const key = 'k'.repeat(64 * 1024);
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push((await get(app, '/', { 'x-api-key': key })).status);
      expect(answers).toEqual([200, 200, 429]);
      expect(store.subjects.size).toBe(1);
      expect([...store.subjects][0]!.length).toBeLessThan(100);
      const strict = await start({ limit: 2, window: '1m' });
      // Node answers 431; Node 24 and 26 may close the connection while the client still writes the
      // header (the client then reads a reset, not the 431). Either way the server lives on.
      const over = await get(strict, '/', { 'x-api-key': key }).then(
        (res) => res.status,
        (error: { code?: string }) => error.code,
      );
      expect([431, 'ECONNRESET', 'EPIPE']).toContain(over);
      expect((await get(strict)).status).toBe(200);
    });

    test('malformed Authorization headers count as no token: the IP limit applies', async () => {
      const app = await start({ limit: 3, window: '1m', subject: ['token', 'ip'] });
      const bad = [
        'Bearer',
        'Bearer a b c',
        'Basic Zm9vOmJhcg==',
        'Bearer \u00ff\u00fe',
        `Bearer ${'x'.repeat(5000)} y`,
      ];
      const codes: number[] = [];
      for (const value of bad) codes.push((await get(app, '/', { authorization: value })).status);
      expect(codes).toEqual([200, 200, 200, 429, 429]);
    });

    test('200 distinct X-Forwarded-For values with no proxy trusted: one subject, one limit', async () => {
      // A still clock: 200 requests take seconds on a loaded machine, and on the wall clock a minute
      // that rolled over midway let an 11th through (Hono).
      const store = recording(stillStore());
      const app = await start({ limit: 10, window: '1m', store });
      const agent = request.agent(app.url);
      const codes: number[] = [];
      for (let i = 0; i < 200; i++) {
        const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
        codes.push((await agent.get('/').set('x-forwarded-for', ip)).status);
      }
      expect(codes.filter((c) => c === 200)).toHaveLength(10);
      expect(store.subjects.size).toBe(1);
    });
  });
}

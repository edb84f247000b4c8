import { ErrorCodes, SluiceConfigError } from '@sluice/core';
import { type RateLimiterOptions, rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import request from 'supertest';
import { expressVersions } from '../../packages/express/test/support.js';
import { frameworks } from '../../packages/fastify/test/frameworks.js';

// With subject ['api-key', 'token', 'ip'] and allowList ['10.0.0.5'], a client sending
// `x-api-key: 10.0.0.5` or `Authorization: Bearer 10.0.0.5` was never limited, and CIDR entries
// never matched (a deny list of ranges failed open). Entries are typed by form now (API.md r2).
// Failed on 13f5928.

type Ask = (headers: Record<string, string>) => Promise<number>;

/** Two requests with these headers; the status of the second (the limit is 1). */
type Make = (options: RateLimiterOptions) => Promise<Ask>;

const onExpress: Make = async (options) => {
  const app = expressVersions[0]![1]();
  app.set('trust proxy', true); // the tests pick the client address through X-Forwarded-For
  app.use(rateLimiter(options));
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  return async (headers) => {
    await request(app).get('/').set(headers);
    return (await request(app).get('/').set(headers)).status;
  };
};

const onFastify: Make = async (options) => {
  const app = frameworks[0]![1]({ trustProxy: true });
  await app.register(sluice, options as never);
  app.get('/', async () => 'ok');
  await app.ready();
  return async (headers) => {
    await app.inject({ url: '/', headers });
    return (await app.inject({ url: '/', headers })).statusCode;
  };
};

describe.each([
  ['Express', onExpress],
  ['Fastify', onFastify],
])('%s: list entries are matched by their form', (_name, make) => {
  const limit = {
    limit: 1,
    window: '1m',
    subject: ['api-key', 'token', 'ip'] as RateLimiterOptions['subject'],
  };
  const from = (ip: string, more: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...more });

  it('an address entry does not match a credential that spells it', async () => {
    const ask = await make({ ...limit, allowList: ['10.0.0.5'] });
    expect(await ask(from('198.51.100.1', { 'x-api-key': '10.0.0.5' }))).toBe(429);
    expect(await ask(from('198.51.100.2', { authorization: 'Bearer 10.0.0.5' }))).toBe(429);
    expect(await ask(from('10.0.0.5'))).toBe(200);
  });

  it('CIDR ranges match client addresses, IPv4 and IPv6', async () => {
    const ask = await make({ ...limit, allowList: ['10.0.0.0/8', '2001:db8::/32'] });
    expect(await ask(from('10.200.3.4'))).toBe(200);
    expect(await ask(from('::ffff:10.9.9.9'))).toBe(200);
    expect(await ask(from('2001:db8:42::7'))).toBe(200);
    expect(await ask(from('2001:db9::7'))).toBe(429);
  });

  it('a deny list of ranges answers 403', async () => {
    const ask = await make({ ...limit, limit: 100, denyList: ['203.0.113.0/24'] });
    expect(await ask(from('203.0.113.77'))).toBe(403);
    expect(await ask(from('203.0.114.1'))).toBe(200);
  });

  it('other entries match the subject: a verified one, or the raw key', async () => {
    const verified = await make({
      ...limit,
      verify: (key) => (key === 'k-alice' ? 'alice' : null),
      allowList: ['alice'],
    });
    expect(await verified(from('198.51.100.3', { 'x-api-key': 'k-alice' }))).toBe(200);
    const raw = await make({ ...limit, allowList: ['partner-key'] });
    expect(await raw(from('198.51.100.4', { 'x-api-key': 'partner-key' }))).toBe(200);
  });
});

describe('malformed address entries', () => {
  it.each(['10.0.0.0/33', '999.1.1.1', '2001:db8::/129', '10.0.0.0/', '10.0.0/8', '1.2.3.4/-1'])(
    '%s is a configuration error',
    (entry) => {
      const make = () => rateLimiter({ limit: 1, window: '1m', allowList: [entry] });
      expect(make).toThrow(SluiceConfigError);
      expect(make).toThrow(
        expect.objectContaining({ code: ErrorCodes.INVALID_OPTION, option: 'allowList[0]' }),
      );
    },
  );
});

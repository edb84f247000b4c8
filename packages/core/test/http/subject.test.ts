import { createHash } from 'node:crypto';
import { bearerToken, type SubjectConfig, SubjectResolver } from '../../src/http/subject.js';
import { type FakeRequest, fakeReader } from './support.js';

const sha = (s: string) => createHash('sha256').update(s).digest('base64url');

function resolver(config: Partial<SubjectConfig<FakeRequest>>) {
  return new SubjectResolver<FakeRequest>(
    {
      sources: ['ip'],
      apiKeyHeader: 'x-api-key',
      apiKeyQuery: undefined,
      verify: undefined,
      ipv6Subnet: 64,
      hash: sha,
      ...config,
    },
    fakeReader,
  );
}

describe('subjects', () => {
  test('ip: kind-prefixed, IPv6 grouped, mapped folded, unknown when absent', () => {
    const r = resolver({});
    expect(r.resolve({ ip: '1.2.3.4' })).toEqual({ subject: 'ip:1.2.3.4', listed: undefined });
    expect(r.resolve({ ip: '::ffff:1.2.3.4' })).toEqual({ subject: 'ip:1.2.3.4', listed: undefined });
    expect(r.resolve({ ip: '2001:db8::5' })).toEqual({ subject: 'ip:2001:db8:0:0::/64', listed: undefined });
    expect(r.resolve({})).toEqual({ subject: 'ip:unknown', listed: undefined });
    expect(resolver({ ipv6Subnet: false }).resolve({ ip: '2001:db8::5' })).toMatchObject({
      subject: 'ip:2001:db8:0:0:0:0:0:5',
    });
  });

  test('api-key: hashed, never raw; from the header, or the query when configured', () => {
    const r = resolver({ sources: ['api-key'], apiKeyQuery: 'key' });
    expect(r.resolve({ ip: '1.2.3.4', headers: { 'x-api-key': 's3cret' } })).toEqual({
      subject: `key:${sha('s3cret')}`,
      listed: 's3cret',
    });
    expect(r.resolve({ ip: '1.2.3.4', query: { key: 'q-key' } })).toMatchObject({
      subject: `key:${sha('q-key')}`,
    });
    // The header wins over the query.
    expect(r.resolve({ headers: { 'x-api-key': 'h' }, query: { key: 'q' } })).toMatchObject({
      subject: `key:${sha('h')}`,
    });
    const headerOnly = resolver({ sources: ['api-key'] });
    expect(headerOnly.resolve({ ip: '1.2.3.4', query: { key: 'q-key' } })).toMatchObject({
      subject: 'ip:1.2.3.4',
    });
    const queryOnly = resolver({ sources: ['api-key'], apiKeyHeader: undefined, apiKeyQuery: 'k' });
    expect(queryOnly.resolve({ ip: '1.2.3.4', headers: { 'x-api-key': 'x' } })).toMatchObject({
      subject: 'ip:1.2.3.4',
    });
  });

  test('a key and an address that look alike are different subjects', () => {
    const r = resolver({ sources: ['api-key', 'ip'] });
    const byKey = r.resolve({ ip: '9.9.9.9', headers: { 'x-api-key': '1.2.3.4' } });
    const byIp = r.resolve({ ip: '1.2.3.4' });
    expect(byKey).not.toEqual(byIp);
  });

  test('token: Bearer only; malformed headers count as absent (and fall back to the IP)', () => {
    const r = resolver({ sources: ['token'] });
    const ok = { ip: '1.2.3.4', headers: { authorization: 'Bearer abc.DEF-123_~+/==' } };
    expect(r.resolve(ok)).toEqual({
      subject: `token:${sha('abc.DEF-123_~+/==')}`,
      listed: 'abc.DEF-123_~+/==',
    });
    expect(r.resolve({ headers: { authorization: 'bearer   tok ' } })).toMatchObject({
      subject: `token:${sha('tok')}`,
    });
    for (const bad of [
      'Bearer',
      'Bearer ',
      'Basic dXNlcjpwYXNz',
      'Bearer a b',
      'Bearer a=b',
      'Bearertok',
      'Bearer ä',
      '',
    ]) {
      expect(bearerToken(bad)).toBeUndefined();
      expect(r.resolve({ ip: '1.2.3.4', headers: { authorization: bad } })).toMatchObject({
        subject: 'ip:1.2.3.4',
      });
    }
  });

  test('verify: canonical subject as id:, null counts as absent, the kind is passed', () => {
    const calls: Array<[string, string]> = [];
    const r = resolver({
      sources: ['api-key', 'token'],
      verify: (credential, kind) => {
        calls.push([credential, kind]);
        return credential.startsWith('good') ? `user-${credential.slice(4)}` : null;
      },
    });
    expect(r.resolve({ headers: { 'x-api-key': 'good1' } })).toEqual({
      subject: 'id:user-1',
      listed: 'user-1',
    });
    expect(
      r.resolve({ ip: '5.5.5.5', headers: { 'x-api-key': 'bad', authorization: 'Bearer good2' } }),
    ).toEqual({
      subject: 'id:user-2',
      listed: 'user-2',
    });
    expect(r.resolve({ ip: '5.5.5.5', headers: { 'x-api-key': 'bad' } })).toMatchObject({
      subject: 'ip:5.5.5.5',
    });
    expect(calls).toEqual([
      ['good1', 'api-key'],
      ['bad', 'api-key'],
      ['good2', 'token'],
      ['bad', 'api-key'],
    ]);
  });

  test('async verify and async subject functions are awaited, in order', async () => {
    const r = resolver({
      sources: [async () => undefined, 'api-key', () => 'never'],
      verify: async (c) => (c === 'k' ? 'alice' : null),
    });
    await expect(r.resolve({ headers: { 'x-api-key': 'k' } })).resolves.toEqual({
      subject: 'id:alice',
      listed: 'alice',
    });
    await expect(r.resolve({ headers: { 'x-api-key': 'z' } })).resolves.toEqual({
      subject: 'id:never',
      listed: 'never',
    });
  });

  test('custom functions: first defined wins; "" and null are absent; a finite number is its string; anything else is an error', () => {
    const r = resolver({
      sources: [() => '', () => null as unknown as undefined, (req) => req.headers?.user, 'ip'],
    });
    expect(r.resolve({ ip: '1.1.1.1', headers: { user: 'bob' } })).toEqual({
      subject: 'id:bob',
      listed: 'bob',
    });
    expect(r.resolve({ ip: '1.1.1.1' })).toMatchObject({ subject: 'ip:1.1.1.1' });
    expect(resolver({ sources: [() => 42 as unknown as string] }).resolve({})).toMatchObject({
      subject: 'id:42',
    });
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, {}, true]) {
      const wrong = resolver({ sources: [() => value as unknown as string] });
      expect(() => wrong.resolve({})).toThrow(TypeError);
    }
  });

  test('errors thrown by subject functions and verify propagate', async () => {
    expect(() =>
      resolver({
        sources: [
          () => {
            throw new Error('boom');
          },
        ],
      }).resolve({}),
    ).toThrow('boom');
    const rejecting = resolver({
      sources: ['api-key'],
      verify: async () => Promise.reject(new Error('no db')),
    });
    await expect(rejecting.resolve({ headers: { 'x-api-key': 'k' } })).rejects.toThrow('no db');
  });

  test('a 64 kB key is hashed like any other', () => {
    const key = 'k'.repeat(64 * 1024);
    const id = resolver({ sources: ['api-key'] }).resolve({ headers: { 'x-api-key': key } });
    expect(id).toEqual({ subject: `key:${sha(key)}`, listed: key });
  });
});

import { forwardedByPrivateProxies, isPrivateAddress } from '@sluice/core';

/**
 * The client behind proxies on a private network (what `privateProxyIp` reads), as Express finds it
 * under `trust proxy` 'loopback, linklocal, uniquelocal': a client never picks its own address by
 * writing X-Forwarded-For, whatever it writes.
 */
describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.1.1',
    '::1',
    'fe80::1',
    '[fe80::1%eth0]',
    'fd00::1',
    '::ffff:10.1.2.3',
    // An address written with a port is that address (API.md r3), here as everywhere.
    '10.0.0.1:80',
    '[fd00::1]:443',
  ])('%s: private', (ip) => {
    expect(isPrivateAddress(ip)).toBe(true);
  });

  it.each([
    '203.0.113.7',
    '172.32.0.1',
    '8.8.8.8',
    '2001:db8::1',
    '::ffff:203.0.113.7',
    '',
    'unknown',
    '203.0.113.7:80',
  ])('%j: not private', (ip) => {
    expect(isPrivateAddress(ip)).toBe(false);
  });
});

describe('forwardedByPrivateProxies', () => {
  it.each([
    [
      'a public peer is the client, whatever it writes',
      '203.0.113.7',
      '10.0.0.1, 198.51.100.1',
      '203.0.113.7',
    ],
    [
      'behind one private proxy: the entry it appended',
      '10.0.0.2',
      '198.51.100.1, 203.0.113.7',
      '203.0.113.7',
    ],
    [
      'behind two private proxies: the first public entry from the right',
      '127.0.0.1',
      '203.0.113.7, 10.0.0.3',
      '203.0.113.7',
    ],
    [
      'a client claiming a private address behind the proxy is itself',
      '10.0.0.2',
      '10.9.9.9, 203.0.113.7',
      '203.0.113.7',
    ],
    ['private all the way: the left-most entry', '10.0.0.2', '192.168.0.5, 10.0.0.3', '192.168.0.5'],
    ['a dual-stack peer', '::ffff:10.0.0.2', '203.0.113.7', '203.0.113.7'],
    ['an IPv6 proxy', 'fd00::2', '2001:db8::7', '2001:db8::7'],
    ['an empty entry: the last proxy stands for the client', '10.0.0.2', '203.0.113.7, ', '10.0.0.2'],
    ['a non-address entry is where trust ends', '10.0.0.2', '203.0.113.7, junk', 'junk'],
  ])('%s', (_, peer, forwardedFor, client) => {
    expect(forwardedByPrivateProxies(peer, forwardedFor)).toBe(client);
  });

  it('no header: the peer; no peer: nothing', () => {
    expect(forwardedByPrivateProxies('10.0.0.2', undefined)).toBe('10.0.0.2');
    expect(forwardedByPrivateProxies(undefined, '203.0.113.7')).toBeUndefined();
  });
});

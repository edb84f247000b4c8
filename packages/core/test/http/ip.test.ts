import fc from '../../../../test/support/fast-check.js';
import { addressOf, clientAddress } from '../../src/http/ip.js';

describe('clientAddress', () => {
  test('IPv4 stays as it is', () => {
    expect(clientAddress('203.0.113.7', 64)).toBe('203.0.113.7');
  });

  test.each([
    ['::ffff:1.2.3.4'],
    ['::FFFF:1.2.3.4'],
    ['::ffff:102:304'],
    ['0:0:0:0:0:ffff:1.2.3.4'],
    ['[::ffff:1.2.3.4]'],
  ])('IPv4-mapped %s counts as 1.2.3.4', (ip) => {
    expect(clientAddress(ip, 64)).toBe('1.2.3.4');
    expect(clientAddress(ip, false)).toBe('1.2.3.4');
  });

  test('IPv6 is grouped by its /64 by default, whatever its spelling', () => {
    const a = clientAddress('2001:db8:1:2:3:4:5:6', 64);
    expect(a).toBe('2001:db8:1:2::/64');
    expect(clientAddress('2001:DB8:1:2::ffff', 64)).toBe(a);
    expect(clientAddress('2001:0db8:0001:0002:aaaa::1', 64)).toBe(a);
    expect(clientAddress('[2001:db8:1:2::1]', 64)).toBe(a);
    expect(clientAddress('2001:db8:1:3::1', 64)).not.toBe(a);
  });

  test('other prefix lengths, and false for the full address', () => {
    expect(clientAddress('2001:db8:1:2ff::1', 56)).toBe('2001:db8:1:200::/56');
    expect(clientAddress('2001:db8:1:2ff::1', 48)).toBe('2001:db8:1::/48');
    expect(clientAddress('2001:db8::1', 128)).toBe('2001:db8:0:0:0:0:0:1');
    expect(clientAddress('2001:db8::1', false)).toBe('2001:db8:0:0:0:0:0:1');
    expect(clientAddress('::1', false)).toBe('0:0:0:0:0:0:0:1');
    expect(clientAddress('fe80::1%eth0', false)).toBe('fe80:0:0:0:0:0:0:1');
    expect(clientAddress('1:2:3:4:5:6:7.8.9.10', false)).toBe('1:2:3:4:5:6:708:90a');
    expect(clientAddress('::7.8.9.10', false)).toBe('0:0:0:0:0:0:708:90a');
  });

  // 6cc09fa kept them whole: a proxy that appends the client's port made each connection a subject.
  test('an address written with a port is that address (IPv4:port, [IPv6]:port)', () => {
    expect(clientAddress('203.0.113.66:51000', 64)).toBe('203.0.113.66');
    expect(clientAddress('[2001:db8:1:2::1]:443', 64)).toBe('2001:db8:1:2::/64');
    expect(clientAddress('[::ffff:203.0.113.66]:80', 64)).toBe('203.0.113.66');
    expect(clientAddress('[203.0.113.66]:80', 64)).toBe('203.0.113.66');
    expect(clientAddress('[fe80::1%eth0]:80', false)).toBe('fe80:0:0:0:0:0:0:1');
    for (const s of ['203.0.113.07:80', '[garbage]:80', '1.2.3.4:', '1.2.3.4:x', '[1.2.3.4:5]:6']) {
      expect(addressOf(s, 64)).toBeUndefined();
    }
  });

  // 608b870 kept `::ffff:203.0.113.66:51000` (a mapped address with its port, unbracketed) whole: one
  // subject per source port. The class: every way of writing an address with a port is that address.
  test('every spelling of an address with a port is that address', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.ipV6(), fc.integer({ min: 0, max: 65535 }), (v4, v6, port) => {
        for (const written of [
          `${v4}:${port}`,
          `[${v4}]:${port}`,
          `::ffff:${v4}:${port}`,
          `[::ffff:${v4}]:${port}`,
        ]) {
          expect(addressOf(written, 64)).toBe(v4);
        }
        expect(addressOf(`[${v6}]:${port}`, 64)).toBe(addressOf(v6, 64));
      }),
    );
    expect(clientAddress('::FFFF:203.0.113.66:51000', 64)).toBe('203.0.113.66');
  });

  test('anything that is not an address is kept as it is', () => {
    for (const s of ['', 'garbage', ':::', '1.2.3', '[', '%', '1.2.3.4, 5.6.7.8', '2001:db8::1::2']) {
      expect(clientAddress(s, 64)).toBe(s);
    }
  });

  test('never throws, for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), fc.integer({ min: 1, max: 128 }), (s, n) => {
        expect(typeof clientAddress(s, n)).toBe('string');
        expect(typeof clientAddress(s, false)).toBe('string');
      }),
    );
  });

  test('the full address agrees with the WHATWG URL parser for any IPv6 spelling', () => {
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        const full = clientAddress(ip, false);
        const canonical = new URL(`http://[${ip}]`).hostname;
        if (full.includes('.')) expect(canonical).toMatch(/^\[::ffff:/);
        else expect(new URL(`http://[${full}]`).hostname).toBe(canonical);
      }),
      { numRuns: 2000 },
    );
  });

  test('addresses share a subject exactly when their first `subnet` bits agree', () => {
    const group = fc.integer({ min: 0, max: 0xffff });
    const address = fc.array(group, { minLength: 8, maxLength: 8 });
    const text = (g: number[]) => g.map((x) => x.toString(16)).join(':');
    fc.assert(
      fc.property(address, address, fc.integer({ min: 1, max: 128 }), (a, b, n) => {
        fc.pre(a[0] !== 0); // keeps clear of ::ffff:0:0/96, which folds to IPv4
        // c: a's first n bits, b's rest.
        const c = a.map((x, i) => {
          const keep = Math.min(Math.max(n - i * 16, 0), 16);
          const mask = keep === 0 ? 0 : (0xffff << (16 - keep)) & 0xffff;
          return (x & mask) | (b[i]! & ~mask & 0xffff);
        });
        expect(clientAddress(text(c), n)).toBe(clientAddress(text(a), n));
        const differs = c.some((x, i) => x !== b[i]);
        expect(clientAddress(text(b), n) === clientAddress(text(a), n)).toBe(!differs);
      }),
    );
  });
});

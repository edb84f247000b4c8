/**
 * The core's stand-ins for node:crypto and node:net, which no edge runtime has, give Node's answers:
 * keys hashed on a Worker must be the keys hashed on a Node server sharing its Redis.
 */
import { createHash, createHmac } from 'node:crypto';
import { BlockList, isIP as nodeIsIP } from 'node:net';
import fc from '../../../test/support/fast-check.js';
import { AddressList } from '../src/http/address-list.js';
import { clientAddress } from '../src/http/ip.js';
import { isIP } from '../src/http/ip-syntax.js';
import { credentialDigest, digest } from '../src/keys.js';
import { base64url, bytesOf, hex, sha1 } from '../src/portable/sha.js';

/** Any text, lone surrogates included, of lengths around SHA's 55/56/64-byte block edges. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.string({ minLength: 50, maxLength: 70 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  // 'binary' holds no lone surrogate: halves of one pair, apart or together, and what UTF-8 writes for them.
  fc.string({ unit: fc.constantFrom('a', '\u00e9', '\ud83d', '\ude00', '\ufffd'), maxLength: 80 }),
);

/**
 * What keys hash a string as: its UTF-8 (node:crypto's own) when well formed, else 0xFF and its UTF-16
 * code units, big-endian (UTF-8 would write U+FFFD for every lone surrogate: not injective).
 */
const hashed = (s: string): string | Buffer =>
  (s as string & { isWellFormed(): boolean }).isWellFormed()
    ? s
    : Buffer.concat([Buffer.from([0xff]), Buffer.from(s, 'utf16le').swap16()]);

describe('hashes: byte for byte node:crypto', () => {
  it('SHA-256 (subjects and credentials without a secret)', () => {
    fc.assert(
      fc.property(text, (s) =>
        expect(digest(s)).toBe(createHash('sha256').update(hashed(s)).digest('base64url')),
      ),
      { numRuns: 1000 },
    );
  });

  it('HMAC-SHA-256 under a string or a Buffer secret, keys longer than a block included', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          text.filter((s) => s.length > 0),
          fc.uint8Array({ minLength: 1, maxLength: 200 }),
        ),
        text,
        (secret, s) => {
          const key = typeof secret === 'string' ? secret : Buffer.from(secret);
          expect(credentialDigest(key)(s)).toBe(
            createHmac('sha256', key).update(hashed(s)).digest('base64url'),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('SHA-1 (the script name Redis knows)', () => {
    fc.assert(
      fc.property(text, (s) =>
        expect(hex(sha1(bytesOf(s)))).toBe(createHash('sha1').update(s).digest('hex')),
      ),
      { numRuns: 500 },
    );
  });

  it('base64url of every length remainder', () => {
    for (const length of [0, 1, 2, 3, 4, 5]) {
      const bytes = Uint8Array.from({ length }, (_, i) => 250 - i * 37);
      expect(base64url(bytes)).toBe(Buffer.from(bytes).toString('base64url'));
    }
  });
});

/** Address-like strings: pieces of IPv4 and IPv6 syntax glued at random, valid and not. */
const addressLike = fc
  .array(
    fc.constantFrom(
      '',
      '0',
      '1',
      '01',
      '255',
      '256',
      'ffff',
      'fffff',
      'a',
      'g',
      '.',
      ':',
      '::',
      '%',
      '%eth0',
      '1.2.3.4',
      ' ',
    ),
    { maxLength: 10 },
  )
  .chain((parts) =>
    fc
      .array(fc.constantFrom('', ':', '.'), { minLength: parts.length, maxLength: parts.length })
      .map((seps) => parts.map((p, i) => p + seps[i]).join('')),
  );

describe('IP syntax: node:net.isIP', () => {
  it('answers alike on generated address-like strings', () => {
    fc.assert(
      fc.property(addressLike, (s) => expect(isIP(s)).toBe(nodeIsIP(s))),
      { numRuns: 20000 },
    );
  });

  it('answers alike on the forms that matter', () => {
    for (const s of [
      '1:2:3:4:5:6:7:8',
      '::',
      '::1',
      '1::',
      '1:2:3:4:5:6:7::',
      '::2:3:4:5:6:7:8',
      '1:2:3:4:5:6:1.2.3.4',
      '1:2:3:4:5:6:7:1.2.3.4',
      '::ffff:10.0.0.1',
      'fe80::1%eth0',
      'fe80::1%a_b',
      '1::2::3',
      '01.2.3.4',
      '1.2.3.4%x',
      '2001:db8::/64',
    ])
      expect([s, isIP(s)]).toEqual([s, nodeIsIP(s)]);
  });
});

describe('address ranges: node:net.BlockList', () => {
  const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.'));
  const v6 = fc
    .array(fc.nat(0xffff), { minLength: 8, maxLength: 8 })
    .map((g) => g.map((x) => x.toString(16)).join(':'));

  it.each([
    ['ipv4', v4, 32],
    ['ipv6', v6, 128],
  ] as const)('matches %s addresses against ranges alike', (family, address, bits) => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(address, fc.nat(bits)), { minLength: 1, maxLength: 4 }),
        address,
        (ranges, probe) => {
          const ours = new AddressList();
          const node = new BlockList();
          for (const [network, prefix] of ranges) {
            ours.addSubnet(network, prefix, family);
            node.addSubnet(network, prefix, family);
          }
          // Probes near a range too, or almost every probe misses every range.
          for (const p of [probe, ranges[0]![0]]) {
            const canonical = clientAddress(p, false);
            expect(ours.check(canonical, family)).toBe(node.check(p, family));
          }
        },
      ),
      { numRuns: 2000 },
    );
  });
});

/**
 * SHA-1, SHA-256 and HMAC-SHA-256 in plain TypeScript, synchronous, for every runtime: key parts are
 * computed on the decision path, where WebCrypto (async only) would cost a promise per call, and
 * node:crypto is missing on workerd without nodejs_compat and on Vercel's Edge Runtime. The output is
 * byte for byte node:crypto's (packages/core/test/portable.test.ts compares them).
 */

const encoder = new TextEncoder();

/** Bytes of a string (UTF-8, as node:crypto hashes strings) or the bytes given. */
export function bytesOf(value: string | Uint8Array): Uint8Array {
  return typeof value === 'string' ? encoder.encode(value) : value;
}

/** `data` padded to whole 64-byte blocks with its bit length at the end, big-endian (both hashes). */
function padded(data: Uint8Array): DataView {
  const length = (((data.length + 8) >> 6) + 1) << 6;
  const block = new Uint8Array(length);
  block.set(data);
  block[data.length] = 0x80;
  const view = new DataView(block.buffer);
  const bits = data.length * 8;
  view.setUint32(length - 8, Math.floor(bits / 0x100000000));
  view.setUint32(length - 4, bits >>> 0);
  return view;
}

function wordsToBytes(words: ArrayLike<number>): Uint8Array {
  const out = new Uint8Array(words.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < words.length; i++) view.setUint32(i * 4, words[i]!);
  return out;
}

const K256 = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/** SHA-256 of `data` (FIPS 180-4). */
export function sha256(data: Uint8Array): Uint8Array {
  const view = padded(data);
  const h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  const w = new Uint32Array(64);
  for (let offset = 0; offset < view.byteLength; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!;
      const b = w[i - 2]!;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let [a, b, c, d, e, f, g, hh] = h as unknown as number[];
    for (let i = 0; i < 64; i++) {
      const t1 =
        (hh! + (rotr(e!, 6) ^ rotr(e!, 11) ^ rotr(e!, 25)) + ((e! & f!) ^ (~e! & g!)) + K256[i]! + w[i]!) | 0;
      const t2 = ((rotr(a!, 2) ^ rotr(a!, 13) ^ rotr(a!, 22)) + ((a! & b!) ^ (a! & c!) ^ (b! & c!))) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d! + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0]! += a!;
    h[1]! += b!;
    h[2]! += c!;
    h[3]! += d!;
    h[4]! += e!;
    h[5]! += f!;
    h[6]! += g!;
    h[7]! += hh!;
  }
  return wordsToBytes(h);
}

/** SHA-1 of `data` (FIPS 180-4): what Redis names a script by. */
export function sha1(data: Uint8Array): Uint8Array {
  const view = padded(data);
  const h = new Uint32Array([0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0]);
  const w = new Uint32Array(80);
  for (let offset = 0; offset < view.byteLength; offset += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(offset + i * 4);
    for (let i = 16; i < 80; i++) {
      const x = w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!;
      w[i] = (x << 1) | (x >>> 31);
    }
    let [a, b, c, d, e] = h as unknown as number[];
    for (let i = 0; i < 80; i++) {
      const [f, k] =
        i < 20
          ? [(b! & c!) | (~b! & d!), 0x5a827999]
          : i < 40
            ? [b! ^ c! ^ d!, 0x6ed9eba1]
            : i < 60
              ? [(b! & c!) | (b! & d!) | (c! & d!), 0x8f1bbcdc]
              : [b! ^ c! ^ d!, 0xca62c1d6];
      const t = (((a! << 5) | (a! >>> 27)) + f + e! + k + w[i]!) | 0;
      e = d;
      d = c;
      c = (b! << 30) | (b! >>> 2);
      b = a;
      a = t;
    }
    h[0]! += a!;
    h[1]! += b!;
    h[2]! += c!;
    h[3]! += d!;
    h[4]! += e!;
  }
  return wordsToBytes(h);
}

/** HMAC-SHA-256 (RFC 2104) of `data` under `key`. */
export function hmacSha256(key: Uint8Array, data: Uint8Array): Uint8Array {
  const block = new Uint8Array(64);
  block.set(key.length > 64 ? sha256(key) : key);
  const inner = new Uint8Array(64 + data.length);
  const outer = new Uint8Array(64 + 32);
  for (let i = 0; i < 64; i++) {
    inner[i] = block[i]! ^ 0x36;
    outer[i] = block[i]! ^ 0x5c;
  }
  inner.set(data, 64);
  outer.set(sha256(inner), 64);
  return sha256(outer);
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Base64url without padding, as node:crypto's `digest('base64url')`. */
export function base64url(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += BASE64URL[n >> 18]! + BASE64URL[(n >> 12) & 63]!;
    if (i + 1 < bytes.length) out += BASE64URL[(n >> 6) & 63]!;
    if (i + 2 < bytes.length) out += BASE64URL[n & 63]!;
  }
  return out;
}

export function hex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

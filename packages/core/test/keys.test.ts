import { createLimiter, type Decision, MemoryStore, type Store, type StoreCall } from '@sluice/core';
import fc from '../../../test/support/fast-check.js';
import {
  credentialDigest,
  digest,
  encodeName,
  encodeSubject,
  HeldKeys,
  policyNamespace,
} from '../src/keys.js';

/** Strings rich in the characters that matter to keys: braces, separators, escapes, unicode, long runs. */
const awkward = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', ':', '{', '}', '%', '#', '\\', ' ', '\u0000', 'é', '\ud83d', '7') }),
  fc.string({ unit: 'grapheme', maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 70 }),
  fc.string({ minLength: 60, maxLength: 70 }),
);

describe('subject encoding', () => {
  it('keeps short plain subjects as they are', () => {
    for (const s of ['user-42', 'ip:10.0.0.1', '2001:db8::/64', 'a@b.c', 'k.1_2~3'])
      expect(encodeSubject(s)).toBe(s);
  });

  it('is injective: two different subjects never share a key', () => {
    fc.assert(
      fc.property(awkward, awkward, (a, b) => {
        if (a !== b) expect(encodeSubject(a)).not.toBe(encodeSubject(b));
      }),
      { numRuns: 500 },
    );
  });

  it('never lets a subject open or close a hash tag, and bounds its length', () => {
    fc.assert(
      fc.property(awkward, (s) => {
        const key = encodeSubject(s);
        expect(key).not.toMatch(/[{}]/);
        expect(key).toMatch(/^[\x21-\x7e]*$/);
        expect(key.length).toBeLessThanOrEqual(64);
      }),
      { numRuns: 500 },
    );
  });

  it('replaces long subjects by a digest, never the raw value', () => {
    const token = `eyJhbGciOi${'x'.repeat(200)}`;
    expect(encodeSubject(token)).toBe(`#${digest(token)}`);
    expect(encodeSubject(token)).not.toContain('xxxxxxxx');
  });

  it('hands the store the encoded subject only', async () => {
    const seen: string[] = [];
    const store: Store = {
      local: true,
      consume: (call: StoreCall) => {
        seen.push(call.subject);
        return { now: 0, steps: [{ allowed: true, remaining: 1, resetMs: 0, retryAfterMs: 0, delayMs: 0 }] };
      },
      refund: () => undefined,
      reset: (_limiter, subject) => void seen.push(subject),
    };
    const limiter = createLimiter({ limit: 2, window: '1s', store });
    const secret = `sk_live_${'s3cr3t'.repeat(20)}`;
    await limiter.consume(secret);
    await limiter.reset('{tag}');
    expect(seen).toEqual([`#${digest(secret)}`, '%7btag%7d']);
  });

  // TextEncoder writes U+FFFD for every lone surrogate: hashed as UTF-8, these shared one counter.
  const loneSurrogates = ['\ud800', '\udbff', '\ufffd', '\udc00\ud800'];

  it('gives long subjects that differ only in lone surrogates counters of their own', async () => {
    const limiter = createLimiter({ limit: 1, window: '1m', store: new MemoryStore() });
    for (const head of loneSurrogates) {
      const subject = head + 'x'.repeat(80);
      expect([head, (await limiter.consume(subject)).allowed]).toEqual([head, true]);
    }
    // Short enough to be escaped, too long once escaped: digested as well.
    const shorter = loneSurrogates.map((head) => encodeSubject(head + 'x'.repeat(60)));
    expect(shorter.every((key) => key.startsWith('#'))).toBe(true);
    expect(new Set(shorter).size).toBe(loneSurrogates.length);
    const hmac = credentialDigest('secret');
    expect(new Set(loneSurrogates.map((head) => hmac(head + 'x'.repeat(80)))).size).toBe(
      loneSurrogates.length,
    );
  });

  it('keeps the digest of a well-formed subject: SHA-256 of its UTF-8, as stored counters have it', () => {
    expect(encodeSubject(`${'\u00e9'.repeat(40)}\ud83d\ude00${'x'.repeat(40)}`)).toBe(
      '#Jeok2ag0dD9IYByjO4bKPrBdZQgyw5iBMRkmVWxmhrM',
    );
  });
});

describe('HeldKeys: the keys of a MemoryStore policy', () => {
  it('counts the held keys that are not their own (escaped, digested) through set, delete and clear', () => {
    const held = new HeldKeys<number>();
    const escaped = encodeSubject('a b');
    const digested = encodeSubject('x'.repeat(70));
    for (const key of ['plain', escaped, escaped, digested]) held.set(key, 0);
    expect(held.foreign).toBe(2);
    held.delete(escaped);
    held.delete(escaped);
    held.delete('plain');
    expect(held.foreign).toBe(1);
    held.clear();
    expect(held.foreign).toBe(0);
  });
});

describe('a memory limiter keeps subjects that look like keys apart', () => {
  // Its decide finds a subject held as its own key by one lookup while no key of the policy is an
  // escape or a digest (HeldKeys.foreign), and encodes a subject refunded only then.
  it("counts, refunds and resets each subject on its own, among subjects written as others' keys", async () => {
    const long = (s: string) => s + 'x'.repeat(70);
    // A few subjects, each as itself, as another's key (escaped, or a long one's digest), or long; the
    // calls drawn from the same few, so that subjects meet keys posing as their own.
    const traces = fc.array(awkward, { minLength: 1, maxLength: 3 }).chain((bases) => {
      const posing = fc
        .constantFrom(...bases)
        .chain((s) =>
          fc.constantFrom(s, encodeSubject(s), `#${digest(long(s))}`, encodeSubject(long(s)), long(s)),
        );
      const op = fc.constantFrom('consume', 'consume', 'refund', 'reset');
      return fc.array(fc.tuple(op, posing), { maxLength: 16 });
    });
    await fc.assert(
      fc.asyncProperty(traces, async (calls) => {
        let now = 1_700_000_000_000;
        const limiter = createLimiter({
          limit: 100,
          window: '1h',
          store: new MemoryStore({ clock: () => now }),
        });
        const counts = new Map<string, number>();
        const charged = new Map<string, Decision>();
        for (const [op, subject] of calls) {
          now++;
          if (op === 'consume') {
            const decision = await limiter.consume(subject);
            counts.set(subject, (counts.get(subject) ?? 0) + 1);
            charged.set(subject, decision);
            expect(decision.remaining).toBe(100 - counts.get(subject)!);
          } else if (op === 'refund') {
            const decision = charged.get(subject);
            if (decision === undefined) continue;
            charged.delete(subject);
            await decision.refund!();
            counts.set(subject, counts.get(subject)! - 1);
          } else {
            await limiter.reset(subject);
            counts.delete(subject);
            charged.delete(subject);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  // Its decide finds a subject by decideSubject, its reset and refunds by encodeSubject: they must
  // meet, for subjects that are not their own keys too.
  it.each([
    ['escaped by encodeSubject', 'a b%{x}'],
    ['digested', `sk_live_${'s3cr3t'.repeat(20)}`],
  ])('a memory limiter resets and refunds a subject %s', async (_, subject) => {
    const limiter = createLimiter({ limit: 2, window: '1m', store: new MemoryStore() });
    await limiter.consume(subject);
    const last = await limiter.consume(subject);
    expect((await limiter.consume(subject)).allowed).toBe(false);
    await last.refund!();
    expect(await limiter.consume(subject)).toMatchObject({ allowed: true, remaining: 0 });
    await limiter.reset(subject);
    expect(await limiter.consume(subject)).toMatchObject({ allowed: true, remaining: 1 });
    // A subject written as the other's key is counted on its own.
    expect(await limiter.consume(encodeSubject(subject))).toMatchObject({ allowed: true, remaining: 1 });
  });
});

describe('name encoding', () => {
  it('escapes separators and braces injectively', () => {
    expect(encodeName('a:b{c}')).toBe('a%3ab%7bc%7d');
    fc.assert(
      fc.property(awkward, awkward, (a, b) => {
        if (a !== b) expect(encodeName(a)).not.toBe(encodeName(b));
        expect(encodeName(a)).not.toMatch(/[{}:]/);
      }),
      { numRuns: 1000 },
    );
  });

  it('builds a namespace of prefix, limiter, policy and algorithm code', () => {
    expect(policyNamespace('sluice', 'api:v1', '100-per-15m', 'sw')).toBe('sluice:api%3av1:100-per-15m:sw');
  });
});

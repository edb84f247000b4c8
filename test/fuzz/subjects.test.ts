import { createHttpHandler, type HttpOptions } from '@sluice/core';
import { encodeSubject } from '../../packages/core/src/keys.js';
import { type FakeRequest, fakeReader } from '../../packages/core/test/http/support.js';
import fc from '../support/fast-check.js';
import { recordWarnings } from '../support/warnings.js';

/**
 * Random requests through subject extraction (no user callbacks, so everything is synchronous): it
 * never throws, the key a subject becomes is bounded, and no raw credential survives into it.
 */
const RUNS = 2000;
/** Credentials at least this long cannot show up in a digest by chance. */
const SECRET_MIN = 12;

const address = fc.oneof(
  fc.ipV4(),
  fc.ipV4Extended(),
  fc.ipV6(),
  fc.ipV4().map((ip) => `::ffff:${ip}`),
  fc.ipV6().map((ip) => `[${ip}]`),
  fc.ipV6().map((ip) => `${ip}%eth0`),
  fc.constantFrom(
    'unknown',
    '',
    ' ',
    '::',
    '1.2.3',
    '999.1.1.1',
    ':::1',
    '[::1',
    'fe80::1%',
    '1.2.3.4, 5.6.7.8',
  ),
  fc.string({ maxLength: 100 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

const headerValue = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ minLength: SECRET_MIN, maxLength: 64 }).map((t) => `Bearer ${t}`),
  fc.constantFrom('Bearer', 'Bearer ', 'bearer abc.def', 'Basic dXNlcjpwYXNz', 'Bearer a b', 'Bearer ===='),
  fc.constant(null).map(() => 'k'.repeat(64 * 1024)),
);

const request: fc.Arbitrary<FakeRequest> = fc.record(
  {
    ip: address,
    headers: fc.dictionary(
      fc.oneof(
        fc.constantFrom('x-api-key', 'authorization', 'x-forwarded-for', 'x-key'),
        fc.string({ maxLength: 12 }),
      ),
      headerValue,
      { maxKeys: 5 },
    ),
    query: fc.dictionary(
      fc.oneof(fc.constantFrom('key', 'api_key'), fc.string({ maxLength: 6 })),
      headerValue,
      {
        maxKeys: 3,
      },
    ),
  },
  { requiredKeys: [] },
);

const source = fc.constantFrom('ip' as const, 'api-key' as const, 'token' as const);
const subjectOptions: fc.Arbitrary<HttpOptions<FakeRequest>> = fc.record(
  {
    subject: fc.oneof(source, fc.array(source, { minLength: 1, maxLength: 3 })),
    apiKey: fc.oneof(
      fc.constant({ header: 'x-api-key' }),
      fc.constant({ query: 'key' }),
      fc.constant({ header: 'X-Key', query: 'api_key' }),
    ),
    ipv6Subnet: fc.oneof(fc.integer({ min: 1, max: 128 }), fc.constant(false as const)),
  },
  { requiredKeys: [] },
);

/** Every credential a request carries that a subject must never show. */
function secrets(req: FakeRequest): string[] {
  const found: string[] = [];
  for (const value of [...Object.values(req.headers ?? {}), ...Object.values(req.query ?? {})]) {
    const bearer = /^Bearer +(\S+)/i.exec(value)?.[1];
    for (const candidate of [value, bearer]) {
      if (candidate !== undefined && candidate.length >= SECRET_MIN) found.push(candidate);
    }
  }
  return found;
}

describe('fuzzed requests through subject extraction', () => {
  // Captured, validation left on (its per-request checks run on fuzzed requests too).
  const warnings = recordWarnings();

  it('never throw, keep keys bounded and never carry a raw credential', () => {
    fc.assert(
      fc.property(subjectOptions, request, (options, req) => {
        const http = createHttpHandler<FakeRequest>({ limit: 5, window: '1m', ...options }, fakeReader);
        const subject = http.subjectOf(req);
        if (typeof subject !== 'string') throw new Error('built-in sources answer synchronously');
        expect(subject).toMatch(/^(ip|key|token|id):/);
        if (/^(key|token):/.test(subject)) expect(subject).toMatch(/^(key|token):[A-Za-z0-9_-]{43}$/);
        const key = encodeSubject(subject);
        expect(key.length).toBeLessThanOrEqual(64);
        for (const secret of secrets(req)) {
          // The IP is not a credential: a header value may equal it (x-forwarded-for), and that is fine.
          if (subject === `ip:${secret}` || req.ip?.includes(secret)) continue;
          expect(subject.includes(secret)).toBe(false);
          expect(key.includes(secret)).toBe(false);
        }
        const outcome = http.handle(req);
        if (outcome instanceof Promise) throw new Error('a memory store answers synchronously');
        expect(outcome.pass).toBe(true);
      }),
      { numRuns: RUNS },
    );
    // A credential subject without verify is warned about, as it should be, and so is an address that
    // is none (API.md r3: never silently a subject of its own); nothing else is.
    expect(new Set(warnings.codes)).toEqual(
      new Set(['ERR_SLUICE_UNVERIFIED_CREDENTIAL', 'ERR_SLUICE_NOT_AN_ADDRESS']),
    );
  });

  it('IPv6 clients that rotate addresses inside their subnet stay one subject', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }),
        fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 4, maxLength: 4 }),
        fc.integer({ min: 1, max: 64 }),
        (groups, rotated, subnet) => {
          const http = createHttpHandler<FakeRequest>(
            { limit: 5, window: '1m', ipv6Subnet: subnet },
            fakeReader,
          );
          const hex = (g: number[]) => g.map((x) => x.toString(16)).join(':');
          // IPv4-mapped addresses are folded to IPv4, not grouped: keep the address out of ::ffff:0:0/96.
          fc.pre(!(groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff));
          const a = http.subjectOf({ ip: hex(groups) });
          const b = http.subjectOf({ ip: hex([...groups.slice(0, 4), ...rotated]) });
          expect(a).toBe(b);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

import { createLimiter, type Policy, type RedisClient, RedisStore } from '@sluice/core';
import { digest, encodeSubject } from '../../packages/core/src/keys.js';
import {
  CLIENTS_AND_BACKENDS,
  closeClients,
  sharedClient,
  uniquePrefix,
} from '../../packages/core/test/redis/clients.js';
import fc from '../support/fast-check.js';
import { describeRedis } from '../support/redis.js';
import { FRAMEWORKS, statuses } from './servers.js';

/**
 * Subjects an attacker can choose (a custom subject function reading a header, a verified id, an
 * address string) crafted to open or close a Redis Cluster hash tag, add a key separator, pass for an
 * escape or a digest, or name a limiter's tag: none may share or take another subject's counter.
 */
const VICTIM = 'victim';
const CRAFTED = [
  '{victim}',
  'victim}',
  '}victim',
  '{victim',
  'x{victim}y',
  '{}victim',
  'victim:',
  ':victim',
  'victim:{victim}',
  'victim%',
  // What '{victim}' is escaped to, and its upper-case twin: raw, they must not pass for the escape.
  encodeSubject('{victim}'),
  '%7Bvictim%7D',
  '#victim',
  `#${digest(VICTIM)}`,
  '{%@default}',
  '%@default',
  '',
  ' victim',
  'victim ',
  'VICTIM',
  'vic\u0000tim',
  'victim\n',
  'v\u00edctim',
  'v'.repeat(65),
  `${VICTIM}${'\u200b'}`,
];

/** Characters that matter to keys and tags, so random subjects hit the edge cases often. */
const hostile = fc.string({
  unit: fc.constantFrom(
    '{',
    '}',
    ':',
    '%',
    '#',
    '@',
    '7',
    'b',
    'd',
    'u',
    'v',
    ' ',
    '\u00e9',
    '\ud83d\ude00',
    '\u0000',
  ),
  maxLength: 12,
});

describe('subject encoding', () => {
  it('is injective and never yields a brace, whatever the subjects', () => {
    fc.assert(
      fc.property(fc.oneof(hostile, fc.string({ unit: 'binary', maxLength: 80 })), hostile, (a, b) => {
        fc.pre(a !== b);
        const [ea, eb] = [encodeSubject(a), encodeSubject(b)];
        expect(ea).not.toBe(eb);
        expect(/[{}]/.test(ea)).toBe(false);
        expect(ea.length).toBeLessThanOrEqual(64);
      }),
      { numRuns: 5000 },
    );
  });

  it('keeps every crafted subject apart from the victim and from each other', () => {
    const subjects = [VICTIM, ...CRAFTED];
    expect(new Set(subjects).size).toBe(subjects.length);
    expect(new Set(subjects.map(encodeSubject)).size).toBe(subjects.length);
  });
});

describeRedis('crafted subjects on Redis', () => {
  afterAll(closeClients);

  const shapes: Array<[string, Policy[]]> = [
    ['subject-scoped (the subject is the hash tag)', [{ limit: 2, window: '1m' }]],
    [
      'with a global policy (the limiter is the hash tag, the subject follows it)',
      [
        { limit: 2, window: '1m', name: 'mine' },
        { limit: 1000, window: '1m', name: 'everyone', scope: 'global' },
      ],
    ],
  ];

  describe.each(CLIENTS_AND_BACKENDS)('%s, %s', (name, backend) => {
    let redis: RedisClient;
    beforeAll(async () => {
      redis = await sharedClient(name, backend);
    });
    const client = () => redis;

    it.each(shapes)(
      '%s: exhausting a crafted subject leaves the victim whole, and back',
      async (_shape, policies) => {
        for (const crafted of CRAFTED) {
          const limiter = createLimiter({
            policies,
            store: new RedisStore({ client: client() }),
            storeTimeout: '5s', // past 250 ms on a loaded machine, a call was decided in process
            prefix: uniquePrefix('inject'),
          });
          for (let i = 0; i < 3; i++) await limiter.consume(crafted);
          expect((await limiter.consume(crafted)).allowed).toBe(false);
          const victim = await limiter.consume(VICTIM);
          expect({ crafted, allowed: victim.allowed, remaining: victim.remaining }).toEqual({
            crafted,
            allowed: true,
            remaining: 1,
          });
          await limiter.consume(VICTIM);
          await limiter.reset(crafted);
          // The victim's counter is intact after the attacker's reset, and the attacker's is empty.
          expect((await limiter.consume(VICTIM)).allowed).toBe(false);
          expect((await limiter.consume(crafted)).allowed).toBe(true);
        }
      },
    );

    it('random hostile subject pairs never share a counter', async () => {
      await fc.assert(
        fc.asyncProperty(hostile, hostile, async (a, b) => {
          fc.pre(a !== b);
          const limiter = createLimiter({
            limit: 1,
            window: '1m',
            store: new RedisStore({ client: client() }),
            storeTimeout: '5s',
            prefix: uniquePrefix('pairs'),
          });
          expect((await limiter.consume(a)).allowed).toBe(true);
          expect((await limiter.consume(b)).allowed).toBe(true);
          expect((await limiter.consume(a)).allowed).toBe(false);
        }),
        // Every client and backend: 1,200 pairs in all.
        { numRuns: 150 },
      );
    });
  });

  describe.each(FRAMEWORKS)('a subject from a request header on $name', (framework) => {
    it('cannot pose as an IP subject or a hashed credential', async () => {
      const store = new RedisStore({ client: await sharedClient('ioredis', 'cluster') });
      const server = await framework.serve([
        {
          limit: 2,
          window: '1m',
          store,
          storeTimeout: '5s',
          validate: false, // an unverified key is the point (its warning is validation-warnings.test.ts's)
          prefix: uniquePrefix('posing'),
          subject: [
            (req: { headers: Record<string, string | undefined> }) => req.headers['x-user'],
            'api-key',
            'ip',
          ],
        },
      ]);
      try {
        const poses = [
          'ip:127.0.0.1',
          'ip:::ffff:127.0.0.1',
          `key:${digest('sk_live_someone')}`,
          '{ip:127.0.0.1}',
        ];
        for (const pose of poses) {
          expect(
            await statuses(server, [{ 'x-user': pose }, { 'x-user': pose }, { 'x-user': pose }]),
          ).toEqual([200, 200, 429]);
        }
        // The real IP subject and the real key's subject still have their whole budget.
        expect(await statuses(server, [{}, {}, {}])).toEqual([200, 200, 429]);
        const key = { 'x-api-key': 'sk_live_someone' };
        expect(await statuses(server, [key, key, key])).toEqual([200, 200, 429]);
      } finally {
        await server.close();
      }
    });
  });
});

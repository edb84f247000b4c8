import { createLimiter, type Policy, RedisStore, type StoreLimiter } from '@sluice/core';
import type { Cluster } from 'ioredis';
import { describeRedis, sharedCluster } from '../../../../test/support/redis.js';
import { algorithms } from '../../src/algorithms/index.js';
import { encodeSubject, policyNamespace } from '../../src/keys.js';
import { planOf } from '../../src/stores/redis/keys.js';
import { CLIENT_NAMES, closeClients, clusterClient, sharedClient, uniquePrefix } from './clients.js';

/** Subjects that try to break out of their key or hash tag, or to pass for another subject. */
const hostile = [
  'a',
  '{',
  '}',
  '{a}',
  'a}{b',
  '}{',
  ':',
  'a:b',
  'a b',
  ' ',
  'ключ',
  '🔑',
  '',
  '%',
  '%25',
  '%@api',
  '@api',
  '#x',
  'user:{42}',
  '{user}:42',
  'x'.repeat(10_000),
  `${'x'.repeat(10_000)}y`,
];

function limiterOf(policies: Array<{ name: string; scope: 'subject' | 'global' }>): StoreLimiter {
  return {
    prefix: 'sluice',
    name: 'api',
    policies: policies.map(({ name, scope }) => ({
      algorithm: algorithms['sliding-window'],
      params: { limit: 5, windowMs: 1000, burst: 5 },
      scope,
      namespace: policyNamespace('sluice', 'api', name, 'sw'),
    })),
  };
}

function keysOf(limiter: StoreLimiter, subject: string): string[] {
  const keys: Array<string | number> = [];
  planOf(limiter).keys(encodeSubject(subject), keys);
  return keys as string[];
}

/** What Redis Cluster hashes: the content of the first {...} if it is not empty, else the whole key. */
function hashed(key: string): string {
  const open = key.indexOf('{');
  const close = open === -1 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

describe('Redis key layout', () => {
  const subjectScoped = limiterOf([
    { name: 'one', scope: 'subject' },
    { name: 'two', scope: 'subject' },
  ]);
  const withGlobal = limiterOf([
    { name: 'one', scope: 'subject' },
    { name: 'all', scope: 'global' },
  ]);

  test('a subject keeps its own tag, whatever it holds, and no two subjects share a key', () => {
    const seen = new Map<string, string>();
    for (const subject of hostile) {
      const keys = keysOf(subjectScoped, subject);
      // One tag per key, and the same for every key of the call: one cluster slot.
      for (const key of keys) {
        expect(key.split('{')).toHaveLength(2);
        expect(key.split('}')).toHaveLength(2);
        expect(hashed(key)).toBe(hashed(keys[0]!));
        expect(hashed(key)).not.toBe(key);
        expect(seen.get(key) ?? subject).toBe(subject);
        seen.set(key, subject);
      }
    }
    // Different subjects, different tags: they spread over the cluster.
    expect(new Set(hostile.map((s) => hashed(keysOf(subjectScoped, s)[0]!))).size).toBe(hostile.length);
  });

  test('a limiter with a global policy puts every key under its own tag, apart from every subject', () => {
    const all = new Set<string>();
    for (const subject of hostile) {
      const keys = keysOf(withGlobal, subject);
      for (const key of keys) expect(hashed(key)).toBe('%@api');
      all.add(keys[0]!);
      all.add(keys[1]!);
    }
    // One global key for everyone, one subject key each.
    expect(all.size).toBe(hostile.length + 1);
    // No subject's own tag is the limiter's.
    for (const subject of hostile) expect(hashed(keysOf(subjectScoped, subject)[0]!)).not.toBe('%@api');
  });

  test("a release's subset of policies keeps the whole limiter's tag", () => {
    const leases: StoreLimiter = {
      ...withGlobal,
      policies: withGlobal.policies.slice(0, 1),
      hasGlobalPolicy: true,
    };
    expect(keysOf(leases, 'u')).toEqual(keysOf(withGlobal, 'u').slice(0, 1));
  });

  test('long subjects are digested: keys stay short and hold no raw subject', () => {
    for (const subject of hostile.filter((s) => s.length > 64)) {
      for (const key of keysOf(subjectScoped, subject)) {
        expect(key.length).toBeLessThan(100);
        expect(key).not.toContain('x'.repeat(65));
      }
    }
  });

  test('the plan is computed once per limiter object', () => {
    expect(planOf(subjectScoped)).toBe(planOf(subjectScoped));
  });
});

describeRedis('Redis keys on a cluster', () => {
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = clusterClient(await sharedCluster());
  });

  afterAll(closeClients);

  const policySets: Array<[string, Policy[]]> = [
    [
      'subject-scoped',
      [
        { limit: 5, window: '1m' },
        { limit: 9, window: '1h', algorithm: 'sliding-log' },
      ],
    ],
    [
      'with a global policy',
      [
        { limit: 5, window: '1m' },
        { limit: 1000, window: '1h', algorithm: 'gcra', scope: 'global' },
      ],
    ],
  ];
  // Every client on the cluster; the keys are read through ioredis.
  const runs = CLIENT_NAMES.flatMap((name) =>
    policySets.map(([label, policies]) => [name, label, policies] as const),
  );

  test.each(runs)(
    '%s, %s: hostile subjects keep to their own keys, each with a TTL',
    async (name, _label, policies) => {
      const prefix = uniquePrefix('hygiene');
      const client = await sharedClient(name, 'cluster');
      // A generous timeout: past 250 ms on a loaded machine, a call was decided in process.
      const limiter = createLimiter({
        policies,
        prefix,
        store: new RedisStore({ client }),
        storeTimeout: '5s',
      });
      // Subject i spends 1 + i % 3: a subject that shared a counter with another would show it.
      for (const [i, subject] of hostile.entries()) {
        const decision = await limiter.consume(subject, { cost: 1 + (i % 3) });
        expect(decision.allowed).toBe(true);
      }
      for (const [i, subject] of hostile.entries()) {
        const seen = await limiter.peek(subject);
        expect(seen.policies[0]!.remaining).toBe(5 - 1 - (i % 3));
      }
      const keys = (
        await Promise.all(cluster.nodes('master').map((node) => node.keys(`${prefix}:*`)))
      ).flat();
      const global = policies.some((p) => p.scope === 'global');
      expect(keys).toHaveLength(hostile.length * (global ? 1 : 2) + (global ? 1 : 0));
      for (const key of keys) {
        expect(await cluster.pttl(key)).toBeGreaterThan(0);
        expect(key).not.toContain('x'.repeat(65));
        expect(key).not.toMatch(/[^\x21-\x7e]/);
      }
    },
  );
});

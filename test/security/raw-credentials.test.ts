import { randomBytes } from 'node:crypto';
import { RedisStore } from '@sluice/core';
import type { Cluster, Redis } from 'ioredis';
import { encodeSubject } from '../../packages/core/src/keys.js';
import {
  closeClients,
  clusterClient,
  standaloneClient,
  uniquePrefix,
} from '../../packages/core/test/redis/clients.js';
import { describeRedis, sharedCluster, sharedRedis } from '../support/redis.js';
import { type Entry, scanAll, scanCluster, unhashedCredentials } from './redis-keys.js';
import { FRAMEWORKS, type Options } from './servers.js';

/**
 * Every framework, on a standalone Redis and on a Redis Cluster, answers requests carrying known API
 * keys and bearer tokens through every limiter shape that sees a credential (hashed, verified,
 * banned, several algorithms); then every key of both servers is read, names and contents, and none
 * may hold any part of a credential that would identify it: the raw value, its key-escaped or
 * URL-encoded form, or its random core.
 */
interface Secret {
  headers: Record<string, string>;
  /** What must never appear: the credential and its random core, in every encoding a key might use. */
  forms: string[];
}

function secret(kind: 'api-key' | 'token', shape: (core: string) => string): Secret {
  const core = randomBytes(12).toString('hex');
  const raw = shape(core);
  const headers: Record<string, string> =
    kind === 'api-key' ? { 'x-api-key': raw } : { authorization: `Bearer ${raw}` };
  return { headers, forms: [raw, core, encodeSubject(raw), encodeURIComponent(raw)] };
}

const SECRETS: Secret[] = [
  secret('api-key', (c) => `sk_live_${c}`),
  secret('api-key', (c) => `sk:{${c}}%2F#x`),
  secret('api-key', (c) => `${c}`),
  secret('token', (c) => `tok_${c}`),
  secret('token', (c) => `${c}.${c.slice(0, 8)}~+/==`),
];

/** Every limiter shape that reads a credential, on `store` under `prefix`. */
function limiters(store: RedisStore, prefix: string): Options[] {
  // validate off: credentials without verify are the point here (their warning is validation-warnings.test.ts's).
  // storeTimeout 10 s: what reaches Redis is the point, not how fast; at load 10 calls outlasted 250 ms,
  // were decided in process and warned (48 warnings, one run in three).
  const base = { store, prefix, validate: false, storeTimeout: '10s' };
  return [
    { ...base, name: 'hashed', limit: 50, window: '1m', subject: ['api-key', 'token', 'ip'] },
    {
      ...base,
      name: 'verified',
      limit: 50,
      window: '1m',
      subject: ['token', 'api-key', 'ip'],
      verify: (credential: string) => `account-${credential.length}`,
    },
    {
      ...base,
      name: 'every-algorithm',
      subject: ['api-key', 'token'],
      policies: [
        { name: 'sliding-log', limit: 50, window: '1m', algorithm: 'sliding-log' },
        { name: 'concurrency', limit: 50, window: '1m', algorithm: 'concurrency' },
        { name: 'gcra', limit: 50, window: '1m', algorithm: 'gcra', burst: 60 },
        { name: 'fixed-window', limit: 50, window: '1m', algorithm: 'fixed-window' },
      ],
    },
    // Denied from the second request on, banned after two denials: the ban's own keys are written too.
    {
      ...base,
      name: 'banned',
      limit: 1,
      window: '1m',
      subject: ['api-key', 'token'],
      ban: { after: 2, for: '1m' },
    },
  ];
}

function leaks(entries: Entry[]): string[] {
  const found: string[] = [];
  for (const { key, content } of entries) {
    for (const { forms } of SECRETS) {
      for (const form of forms) {
        if (key.includes(form) || content.includes(form)) found.push(`${key} holds ${form}`);
      }
    }
  }
  return found;
}

describeRedis('no raw credential reaches Redis', () => {
  let standalone: Redis;
  let cluster: Cluster;
  const prefixes: string[] = [];

  beforeAll(async () => {
    standalone = standaloneClient(await sharedRedis());
    cluster = clusterClient(await sharedCluster());
    const targets: Array<Redis | Cluster> = [standalone, cluster];
    for (const framework of FRAMEWORKS) {
      for (const client of targets) {
        const prefix = uniquePrefix('security');
        prefixes.push(prefix);
        const server = await framework.serve(limiters(new RedisStore({ client }), prefix));
        try {
          for (let round = 0; round < 4; round++) {
            for (const { headers } of SECRETS) expect((await server.get(headers)).status).toBeLessThan(500);
          }
        } finally {
          await server.close();
        }
      }
    }
  });
  afterAll(closeClients);

  it('wrote keys for every framework, server and limiter (the scan below is not vacuous)', async () => {
    const keys = [...(await scanAll(standalone)), ...(await scanCluster(cluster))].map((e) => e.key);
    for (const prefix of prefixes) {
      for (const name of ['hashed', 'verified', 'every-algorithm', 'banned']) {
        expect(keys.some((k) => k.startsWith(`${prefix}:${name}:`))).toBe(true);
      }
      expect(keys.filter((k) => k.startsWith(prefix)).length).toBeGreaterThanOrEqual(SECRETS.length * 4);
    }
  });

  it('no key of the standalone server holds a credential, in its name or its content', async () => {
    const entries = await scanAll(standalone);
    expect(leaks(entries)).toEqual([]);
    expect(unhashedCredentials(entries)).toEqual([]);
  });

  it('no key of any cluster master holds a credential, in its name or its content', async () => {
    const entries = await scanCluster(cluster);
    expect(leaks(entries)).toEqual([]);
    expect(unhashedCredentials(entries)).toEqual([]);
  });

  it('the credential audit flags a key whose credential subject is not a digest', () => {
    const hashed = `sluice:api:p:sw:{key:${'A'.repeat(43)}}`;
    const raw = 'sluice:api:p:sw:{key:sk_live_abc}';
    const behindGlobal = 'sluice:api:p:sw:{%@api}:token:tok_abc';
    const entries = [hashed, raw, behindGlobal, 'sluice:api:g:sw:{%@api}'].map((key) => ({
      key,
      content: '',
    }));
    expect(unhashedCredentials(entries)).toEqual([raw, behindGlobal]);
  });
});

import { connectCluster } from '@sluice-examples/shared/redis.js';
import type { Cluster } from 'ioredis';
import { describeRedis, formatNodes, sharedCluster } from '../../test/support/redis.js';
import {
  type Answer,
  ask,
  askInTurn,
  closedPort,
  envForSuite,
  inventedKeys,
  listenExpress,
  sluiceWarningsOf,
  startEach,
  startUp,
  statuses,
  uniquePrefix,
} from '../shared/listen.js';
import { createApp } from './app.js';

describeRedis('examples/redis-cluster', () => {
  let client: Cluster;
  let prefix: string;
  const as = (key: string, init: RequestInit = {}) => ({ ...init, headers: { 'x-api-key': key } });
  /** Known keys: `key-client-0` is client-0's, up to 11, and `key-buyer-1` buyer-1's, up to 5. */
  const knownKeys = new Map(
    [
      ...Array.from({ length: 12 }, (_, i) => `client-${i}`),
      ...Array.from({ length: 5 }, (_, i) => `buyer-${i + 1}`),
    ].map((id) => [`key-${id}`, id]),
  );

  /** The cluster slot of every key under this test's prefix, read from every master. */
  async function slotsOf(limiter: string): Promise<Set<number>> {
    const keys: string[] = [];
    for (const node of client.nodes('master')) {
      keys.push(...(await node.keys(`${prefix}:${limiter}:*`)));
    }
    expect(keys.length).toBeGreaterThan(0);
    const slots = await Promise.all(keys.map((key) => client.cluster('KEYSLOT', key) as Promise<number>));
    return new Set(slots);
  }

  envForSuite('REDIS_CLUSTER_NODES', async () => formatNodes(await sharedCluster()));
  beforeAll(async () => {
    client = await connectCluster();
  });
  afterAll(() => client.disconnect());
  const app = startEach(() => {
    prefix = uniquePrefix('redis-cluster');
    return listenExpress(createApp({ client, prefix, keys: knownKeys, storeTimeout: '5s' }));
  });

  it('limits each client on /api, with clients spread over slots', async () => {
    const answers = await askInTurn(21, `${app.url}/api/things`, as('key-client-0'));
    expect(
      statuses(answers)
        .slice(0, 20)
        .every((s) => s === 200),
    ).toBe(true);
    expect(answers[20]!.status).toBe(429);
    for (let i = 1; i < 12; i++)
      expect((await ask(`${app.url}/api/things`, as(`key-client-${i}`))).status).toBe(200);
    // Twelve clients, twelve hash tags: their keys are not all in one slot.
    expect((await slotsOf('api')).size).toBeGreaterThan(1);
  });

  it('decides a per-client and a site-wide policy together, the limiter pinned to one slot', async () => {
    const mine = await askInTurn(4, `${app.url}/checkout`, as('key-buyer-1', { method: 'POST' }));
    expect(statuses(mine)).toEqual([200, 200, 200, 429]);
    expect(mine[3]!.body.policy).toBe('per-client');
    expect(mine[0]!.headers.get('ratelimit-policy')).toBe('"per-client";q=3;w=60, "site-wide";q=50;w=1');
    for (let i = 2; i < 6; i++) await ask(`${app.url}/checkout`, as(`key-buyer-${i}`, { method: 'POST' }));
    // A global policy puts every key of its limiter under the limiter's hash tag: one slot.
    expect((await slotsOf('checkout')).size).toBe(1);
  });

  it('a client inventing a key per request is limited as one client, on both limiters', async () => {
    const api: Answer[] = [];
    for (const key of inventedKeys(21)) api.push(await ask(`${app.url}/api/things`, as(key)));
    expect(
      statuses(api)
        .slice(0, 20)
        .every((s) => s === 200),
    ).toBe(true);
    expect(api[20]!.status).toBe(429);
    const checkout: Answer[] = [];
    for (const key of inventedKeys(4))
      checkout.push(await ask(`${app.url}/checkout`, as(key, { method: 'POST' })));
    expect(statuses(checkout)).toEqual([200, 200, 200, 429]);
    expect(checkout[3]!.body.policy).toBe('per-client');
  });

  it('starts without ERR_SLUICE_UNVERIFIED_CREDENTIAL', async () => {
    const codes = await sluiceWarningsOf(() => createApp({ client, prefix }));
    expect(codes).not.toContain('ERR_SLUICE_UNVERIFIED_CREDENTIAL');
  });

  it('says how to start the cluster when it cannot reach it, and exits 1', async () => {
    const nodes = `127.0.0.1:${await closedPort()}`;
    const { status, stderr } = await startUp(__dirname, 'connectCluster', { REDIS_CLUSTER_NODES: nodes });
    expect(status).toBe(1);
    expect(stderr).toContain(`Cannot reach a Redis Cluster at ${nodes}`);
    expect(stderr).toContain('docker compose --profile cluster up -d');
  });
});

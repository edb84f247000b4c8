import { execFileSync } from 'node:child_process';
import Redis, { Cluster } from 'ioredis';
import {
  describeRedis,
  SERVER,
  sharedCluster,
  sharedRedis,
  startCluster,
  startRedis,
} from '../../../../test/support/redis.js';

/** Until the client has reconnected. */
function ready(client: Redis): Promise<void> {
  return client.status === 'ready'
    ? Promise.resolve()
    : new Promise((resolve) => client.once('ready', () => resolve()));
}

/** The test harness itself: servers that stop, crash and come back on their port; a cluster with replicas. */
describeRedis('redis-server harness', () => {
  test('a server is killed and restarted on the same port, and stopped then restarted', async () => {
    const server = await startRedis();
    const client = new Redis(server.url, { maxRetriesPerRequest: 0, retryStrategy: () => 50 });
    try {
      await client.set('k', 'v');
      await server.kill();
      await expect(client.get('k')).rejects.toThrow();
      await server.restart();
      await ready(client);
      // No persistence: the restarted server starts empty.
      await expect(client.get('k')).resolves.toBeNull();
      await server.stop();
      await server.restart();
      // The harness is under test, not ioredis's reconnect timing: a command sent before the client is
      // back failed once (no retries are allowed here), though the server was up.
      await ready(client);
      await expect(client.ping()).resolves.toBe('PONG');
    } finally {
      client.disconnect();
      await server.stop();
    }
  });

  // A pass on Valkey must not be a pass on Redis: the shared servers every suite uses report the
  // version of the binary SLUICE_REDIS_SERVER names (Valkey 8 answers valkey_version:8.x, and
  // redis_version:7.2.4 for compatibility).
  test(`the shared standalone server and cluster are ${SERVER}`, async () => {
    const version = /v=(\d+\.\d+\.\d+)/.exec(execFileSync(SERVER, ['--version'], { encoding: 'utf8' }))![1];
    const field = SERVER === 'redis-server' ? 'redis_version' : `${SERVER.replace(/-server$/, '')}_version`;
    const cluster = await sharedCluster();
    const clients = [new Redis(cluster[0]!.port, cluster[0]!.host)];
    // A REDIS_URL names a server someone else started: only the run's own are checked.
    if (process.env.REDIS_URL === undefined) clients.push(new Redis(await sharedRedis()));
    for (const client of clients) {
      try {
        expect(await client.info('server')).toContain(`${field}:${version}`);
      } finally {
        client.disconnect();
      }
    }
  });

  test('a cluster of three masters with a replica each serves every slot', async () => {
    const cluster = await startCluster({ replicas: 1 });
    const client = new Cluster(cluster.nodes.slice(0, 1));
    try {
      expect(cluster.nodes).toHaveLength(6);
      await Promise.all(Array.from({ length: 50 }, (_, i) => client.set(`k${i}`, String(i))));
      await expect(client.get('k49')).resolves.toBe('49');
      expect(client.nodes('master')).toHaveLength(3);
    } finally {
      client.disconnect();
      await cluster.stop();
    }
  });
});

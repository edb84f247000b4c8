import Redis, { Cluster } from 'ioredis';
import { describeRedis, startCluster, startRedis } from '../../../../test/support/redis.js';

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
      // No persistence: the restarted server starts empty.
      await expect(client.get('k')).resolves.toBeNull();
      await server.stop();
      await server.restart();
      await expect(client.ping()).resolves.toBe('PONG');
    } finally {
      client.disconnect();
      await server.stop();
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

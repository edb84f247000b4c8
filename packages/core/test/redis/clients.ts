import Redis, { Cluster } from 'ioredis';
import type { RedisNode } from '../../../../test/support/redis.js';

/** ioredis clients for the Redis suites; `close()` ends every client made here. */
const made: Array<Redis | Cluster> = [];

export function standaloneClient(url: string, options: { autoPipelining?: boolean } = {}): Redis {
  const client = new Redis(url, {
    enableAutoPipelining: options.autoPipelining ?? false,
    maxRetriesPerRequest: 1,
  });
  made.push(client);
  return client;
}

export function clusterClient(nodes: RedisNode[], options: { autoPipelining?: boolean } = {}): Cluster {
  const client = new Cluster(nodes, {
    enableAutoPipelining: options.autoPipelining ?? false,
    redisOptions: { maxRetriesPerRequest: 1 },
  });
  made.push(client);
  return client;
}

export async function closeClients(): Promise<void> {
  const all = made.splice(0);
  await Promise.all(all.map((c) => c.quit().catch(() => c.disconnect())));
}

/** A key prefix no other test or run uses: suites share the servers. */
let counter = 0;
export function uniquePrefix(label: string): string {
  counter++;
  return `t-${label}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}

import type { Cluster, Redis } from 'ioredis';

/** One Redis key and everything it holds, as text. */
export interface Entry {
  key: string;
  content: string;
}

/** Every value of a key as text, whatever its type. */
async function contentOf(node: Redis, key: string): Promise<string> {
  const type = await node.type(key);
  switch (type) {
    case 'string':
      return (await node.get(key)) ?? '';
    case 'hash':
      return JSON.stringify(await node.hgetall(key));
    case 'list':
      return (await node.lrange(key, 0, -1)).join(' ');
    case 'set':
      return (await node.smembers(key)).join(' ');
    case 'zset':
      return (await node.zrange(key, 0, -1, 'WITHSCORES')).join(' ');
    default:
      return `(${type})`;
  }
}

/** Every key of a server (SCAN, so a big server is read in steps) with its content. */
export async function scanAll(node: Redis): Promise<Entry[]> {
  const entries: Entry[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await node.scan(cursor, 'COUNT', 500);
    cursor = next;
    for (const key of keys) entries.push({ key, content: await contentOf(node, key) });
  } while (cursor !== '0');
  return entries;
}

/** Every key of every master of a cluster. */
export async function scanCluster(cluster: Cluster): Promise<Entry[]> {
  const all = await Promise.all(cluster.nodes('master').map(scanAll));
  return all.flat();
}

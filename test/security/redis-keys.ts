import { Cluster, Redis } from 'ioredis';

/**
 * Reading every key of a Redis server or cluster, and the audit every key must pass. Imports nothing
 * but ioredis: the Jest global teardown loads it outside the module mapper.
 */

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

/**
 * The subject a Sluice key ends with: `ns:{subject}`, or `ns:{%@limiter}:subject` for a limiter with
 * a global policy; undefined for a key that is not a subject's (a global key, another tool's key).
 */
function subjectOf(key: string): string | undefined {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open);
  if (open < 0 || close < 0) return undefined;
  const tag = key.slice(open + 1, close);
  if (!tag.startsWith('%@')) return tag;
  return key[close + 1] === ':' ? key.slice(close + 2) : undefined;
}

/** An API key or token subject is its kind and a SHA-256 digest (keys.ts), nothing else. */
const HASHED = /^(key|token):[A-Za-z0-9_-]{43}$/;

/**
 * Keys whose subject is an API key or bearer token in any form but hashed. Subjects starting
 * `key:` or `token:` are the HTTP layer's credential subjects; a test that consumes such a subject
 * raw at the core level would be flagged here too, rightly: those prefixes are reserved.
 */
export function unhashedCredentials(entries: readonly Entry[]): string[] {
  return entries
    .map((e) => e.key)
    .filter((key) => {
      const subject = subjectOf(key);
      return subject !== undefined && /^(key|token):/.test(subject) && !HASHED.test(subject);
    });
}

/** The audit the global teardown runs on the run's shared servers, after every suite. */
export async function auditSharedServers(shared: {
  standalone?: { url: string };
  cluster?: { nodes: Array<{ host: string; port: number }> };
}): Promise<string[]> {
  const entries: Entry[] = [];
  if (shared.standalone) {
    const client = new Redis(shared.standalone.url);
    entries.push(...(await scanAll(client)));
    client.disconnect();
  }
  if (shared.cluster) {
    const client = new Cluster(shared.cluster.nodes);
    entries.push(...(await scanCluster(client)));
    client.disconnect();
  }
  return unhashedCredentials(entries);
}

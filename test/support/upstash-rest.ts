/**
 * A small stand-in for Upstash's REST API in front of a real redis-server, for @upstash/redis clients
 * in the tests: POST `/` with a JSON command array, or `/pipeline` with an array of them, a bearer
 * token, results as `{ result }` or `{ error }`, strings base64-encoded (nested ones too) when the
 * request says `Upstash-Encoding: base64`. It counts requests, so a test can tell how many HTTP round
 * trips a decision took.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';

export interface UpstashStandIn {
  readonly url: string;
  readonly token: string;
  /** HTTP requests answered so far, and the commands they carried. */
  readonly requests: Array<{ path: string; commands: string[][] }>;
  close(): Promise<void>;
}

type Reply = string | number | null | Reply[];

function encode(reply: Reply, base64: boolean): unknown {
  if (Array.isArray(reply)) return reply.map((r) => encode(r, base64));
  return base64 && typeof reply === 'string' ? Buffer.from(reply).toString('base64') : reply;
}

async function run(
  redis: Redis,
  command: string[],
  base64: boolean,
): Promise<{ result?: unknown; error?: string }> {
  try {
    const [name, ...args] = command;
    return { result: encode((await redis.call(name!, ...args)) as Reply, base64) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

/** A stand-in on 127.0.0.1 in front of the redis-server at `redisUrl`. */
export async function startUpstashStandIn(redisUrl: string, token = 'test-token'): Promise<UpstashStandIn> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const requests: UpstashStandIn['requests'] = [];
  const server: Server = createServer(async (req, res) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST') return answer(405, { error: 'ERR method not allowed' });
    if (req.headers.authorization !== `Bearer ${token}`) return answer(401, { error: 'Unauthorized' });
    const base64 = req.headers['upstash-encoding'] === 'base64';
    const path = (req.url ?? '/').replace(/\/+$/, '') || '/';
    let body: unknown;
    try {
      body = JSON.parse(await read(req));
    } catch {
      return answer(400, { error: 'ERR failed to parse command' });
    }
    const toStrings = (command: unknown) => (command as unknown[]).map(String);
    if (path === '/pipeline' || path === '/multi-exec') {
      const commands = (body as unknown[]).map(toStrings);
      requests.push({ path, commands });
      const results = [];
      for (const command of commands) results.push(await run(redis, command, base64));
      return answer(200, results);
    }
    const command = toStrings(body);
    requests.push({ path, commands: [command] });
    const reply = await run(redis, command, base64);
    return answer(reply.error === undefined ? 200 : 400, reply);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      redis.disconnect();
    },
  };
}

// A small stand-in for Upstash's REST API in front of a real redis-server, shared by the tests
// (@upstash/redis clients through RedisStore) and the benchmark's edge suite: POST `/` with a JSON
// command array, or `/pipeline` with an array of them, a bearer token, results as `{ result }` or
// `{ error }`, strings base64-encoded (nested ones too) when the request says `Upstash-Encoding:
// base64`. It counts requests, so a caller can tell how many HTTP round trips a decision took.
// CommonJS, so that Jest requires it as is and the benchmark's ESM imports it.
const { createHash } = require('node:crypto');
const { createServer } = require('node:http');
const Redis = require('ioredis');

const sha1 = (text) => createHash('sha1').update(text).digest('hex');
/**
 * Upstash accepts a script flag of its own that Redis refuses (`#!lua flags=allow-key-locking`, in
 * every script of @upstash/ratelimit 2): dropped before the script reaches Redis, and the script's
 * hash, which the client computed on its own text, mapped to what Redis knows it by.
 */
const UPSTASH_FLAG = /^(#!lua[^\n]*?)\s*flags=allow-key-locking/;
function toRedis(command, hashes) {
  const [name, ...args] = command;
  const verb = name.toUpperCase();
  if ((verb === 'EVAL' || verb === 'EVAL_RO') && UPSTASH_FLAG.test(args[0])) {
    const script = args[0].replace(UPSTASH_FLAG, '$1');
    hashes.set(sha1(args[0]), sha1(script));
    return [name, script, ...args.slice(1)];
  }
  if ((verb === 'EVALSHA' || verb === 'EVALSHA_RO') && hashes.has(args[0])) {
    return [name, hashes.get(args[0]), ...args.slice(1)];
  }
  return command;
}

function encode(reply, base64) {
  if (Array.isArray(reply)) return reply.map((r) => encode(r, base64));
  return base64 && typeof reply === 'string' ? Buffer.from(reply).toString('base64') : reply;
}

async function run(redis, command, base64, hashes) {
  try {
    const [name, ...args] = toRedis(command, hashes);
    return { result: encode(await redis.call(name, ...args), base64) };
  } catch (error) {
    return { error: error.message };
  }
}

function read(req) {
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
async function startUpstashStandIn(redisUrl, token = 'test-token') {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const requests = [];
  const hashes = new Map();
  const server = createServer(async (req, res) => {
    const answer = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST') return answer(405, { error: 'ERR method not allowed' });
    if (req.headers.authorization !== `Bearer ${token}`) return answer(401, { error: 'Unauthorized' });
    const base64 = req.headers['upstash-encoding'] === 'base64';
    const path = (req.url ?? '/').replace(/\/+$/, '') || '/';
    let body;
    try {
      body = JSON.parse(await read(req));
    } catch {
      return answer(400, { error: 'ERR failed to parse command' });
    }
    const toStrings = (command) => command.map(String);
    if (path === '/pipeline' || path === '/multi-exec') {
      const commands = body.map(toStrings);
      requests.push({ path, commands });
      const results = [];
      for (const command of commands) results.push(await run(redis, command, base64, hashes));
      return answer(200, results);
    }
    const command = toStrings(body);
    requests.push({ path, commands: [command] });
    const reply = await run(redis, command, base64, hashes);
    return answer(reply.error === undefined ? 200 : 400, reply);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve()));
      redis.disconnect();
    },
  };
}

/**
 * The stand-in in a process of its own, as Upstash's service is to an app: the turns it takes to read
 * a request, ask Redis and answer are not the caller's. (In the caller's process, a machine at load
 * that stalled it for a few hundred milliseconds made a whole pipeline of calls outlast storeTimeout,
 * as no remote service would: CI on the third-worker branch, c399a2c.) Its count of requests comes
 * over IPC.
 */
async function spawnUpstashStandIn(redisUrl) {
  const { spawn } = require('node:child_process');
  const child = spawn(process.execPath, [__filename, redisUrl], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const { url, token } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    exited.then((code) => reject(new Error(`the Upstash stand-in exited (${code}) before it listened`)));
  });
  return {
    url,
    token,
    requests: () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve(m.requests));
        child.send('count');
      }),
    close: async () => {
      child.kill();
      await exited;
    },
  };
}

if (require.main === module) {
  startUpstashStandIn(process.argv[2]).then((standIn) => {
    process.send({ url: standIn.url, token: standIn.token });
    process.on('message', () => process.send({ requests: standIn.requests.length }));
    // The caller gone, so is its stand-in.
    process.on('disconnect', () => process.exit(0));
  });
}

module.exports = { startUpstashStandIn, spawnUpstashStandIn };

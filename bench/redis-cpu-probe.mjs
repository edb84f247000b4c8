/**
 * Redis CPU probe: what one decision costs Redis, Sluice beside the peers' Redis stores and beside
 * bare scripts that set the floor, in interleaved rounds against a redis-server started here.
 *
 *   node bench/redis-cpu-probe.mjs [--rounds 5] [--calls 50000] [--subjects 10000] [--inflight 64]
 *     [--sluice label=path[,label=path...]] [--only substring] [--no-memory]
 *
 * Per case and round: Redis CPU per 1,000 decisions (INFO cpu, user + sys), EVALSHA µs per call (INFO
 * commandstats), scripts sent per decision (round trips), and decisions per second from this one Node
 * process at `inflight` calls in flight with ioredis auto-pipelining, and this process's CPU per 1,000
 * decisions (the machine's cores are shared: Node and Redis compete). Then Redis memory per subject
 * (INFO memory used_memory over `subjects` fresh subjects). Medians with the min–max of the rounds.
 * The floors are bare scripts doing what a decision cannot do without: the second is what the
 * peers' scripts do, the next two what a Sluice decision by Redis TIME does at least, and the last two
 * what any store that batches calls (up to 32 a script run, as Sluice does) pays per call: passing the
 * key, writing it once (INCRBY, Redis's cheapest write), and with that reading it and replying with
 * the call's numbers.
 *
 * `--sluice` compares builds of @sluice/core A/B in the same run: each path is an index.ts of a copy of
 * packages/core/src (loaded through test/support/ts-register.cjs, as the tests load it) or a built
 * module; the default is this tree's packages/core/src. The other helpers share the machine, so only
 * numbers from one run, interleaved, compare.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const require = createRequire(import.meta.url);
const Redis = require('ioredis');
const { RateLimiterRedis } = require('rate-limiter-flexible');
const FastifyRedisStore = require('@fastify/rate-limit/store/RedisStore.js');
const { RedisStore: RateLimitRedisStore } = await import('rate-limit-redis');

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : process.argv[at + 1];
}
const ROUNDS = Number(option('rounds', 5));
const CALLS = Number(option('calls', 50_000));
const SUBJECTS = Number(option('subjects', 10_000));
const IN_FLIGHT = Number(option('inflight', 64));
const ONLY = option('only', '');
const MEMORY = !process.argv.includes('--no-memory');
const SLUICE = option('sluice', `src=${join(root, 'packages/core/src/index.ts')}`)
  .split(',')
  .map((spec) => {
    const at = spec.indexOf('=');
    return { label: spec.slice(0, at), path: resolve(spec.slice(at + 1)) };
  });

/** Subjects shaped like client addresses, as the benchmark suite's. */
const subjects = Array.from(
  { length: SUBJECTS },
  (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
);
const UNREACHED = 1_000_000_000;
const SLIDING_WINDOW = [{ limit: UNREACHED, window: '1m' }];
const TWO_POLICIES = [
  { name: 'burst', algorithm: 'token-bucket', limit: UNREACHED, window: '1s' },
  { name: 'hourly', algorithm: 'sliding-window', limit: 100_000_000, window: '1h' },
];

// --- a redis-server of our own -------------------------------------------------------------------

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

function accepts(port) {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

async function startRedis() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-probe-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  const stop = () => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stop);
  // Up once it accepts a connection.
  for (let tries = 0; !(await accepts(port)); tries++) {
    if (tries > 200) throw new Error(`redis-server did not start on port ${port}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const admin = new Redis(port, '127.0.0.1');
  return { port, admin, stop };
}

// --- measurement ---------------------------------------------------------------------------------

async function redisCpuSeconds(admin) {
  const info = await admin.info('cpu');
  return Number(/used_cpu_user:([\d.]+)/.exec(info)[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)[1]);
}

async function commandStats(admin) {
  const stats = {};
  const info = await admin.info('commandstats');
  for (const m of info.matchAll(/cmdstat_([\w|]+):calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)/g)) {
    stats[m[1]] = { calls: Number(m[2]), usecPerCall: Number(m[4]) };
  }
  return stats;
}

/** Decisions that did not come from Redis (Sluice's fallback); a round with any is not a measurement. */
let degraded = 0;

/** `calls` calls of `decide(subject)`, `IN_FLIGHT` at a time, subjects round robin. */
async function drive(decide, calls) {
  let next = 0;
  const worker = async () => {
    while (next < calls) {
      const i = next++;
      const decision = await decide(subjects[i % SUBJECTS]);
      if (decision?.degraded) degraded++;
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function measureCpu(admin, decide) {
  await admin.flushall();
  await admin.config('RESETSTAT');
  const before = await redisCpuSeconds(admin);
  const node = process.cpuUsage();
  const seconds = await drive(decide, CALLS);
  const { user, system } = process.cpuUsage(node);
  const after = await redisCpuSeconds(admin);
  const stats = await commandStats(admin);
  // Round trips: the scripts the clients sent (the commands a script runs count in commandstats too).
  const scripts = (stats.evalsha?.calls ?? 0) + (stats.eval?.calls ?? 0);
  return {
    cpuPer1000: ((after - before) * 1e6) / CALLS,
    nodeCpuPer1000: (user + system) / 1000 / (CALLS / 1000),
    evalshaUs: stats.evalsha?.usecPerCall ?? Number.NaN,
    scriptsPerDecision: scripts / CALLS,
    perSecond: CALLS / seconds,
  };
}

async function usedMemory(admin) {
  // Time for Redis to finish rehashing its key tables (a table mid-rehash is counted twice).
  await new Promise((r) => setTimeout(r, 500));
  return Number(/used_memory:(\d+)/.exec(await admin.info('memory'))[1]);
}

async function measureMemory(admin, decide, sampleKey) {
  await admin.flushall();
  await decide('warm-up');
  const before = await usedMemory(admin);
  for (let i = 0; i < SUBJECTS; i += 500) {
    await Promise.all(subjects.slice(i, i + 500).map(decide));
  }
  const bytes = ((await usedMemory(admin)) - before) / SUBJECTS;
  const keys = await admin.keys(sampleKey);
  return { bytes, key: keys[0] ?? '' };
}

// --- cases ---------------------------------------------------------------------------------------

async function loadSluice(path) {
  if (path.endsWith('.ts')) {
    require(join(root, 'test/support/ts-register.cjs'));
    return require(path);
  }
  return import(pathToFileURL(path).href);
}

function scriptCase(name, client, lua) {
  return {
    name,
    decide: (subject) => client.evalsha(lua.sha, 1, `floor:{${subject}}`),
    prepare: async () => {
      lua.sha = await client.script('LOAD', lua.source);
    },
  };
}

/**
 * A floor for a batching store: the calls of one event-loop turn (up to 32, as Sluice batches them)
 * go to one script run that gets every call's key.
 */
function batchCase(name, client, lua) {
  let queue = [];
  const send = () => {
    const calls = queue;
    queue = [];
    client.evalsha(lua.sha, calls.length, ...calls.map((c) => c.key)).then(
      (reply) => {
        for (const c of calls) c.done(reply);
      },
      (error) => {
        for (const c of calls) c.fail(error);
      },
    );
  };
  return {
    name,
    decide: (subject) =>
      new Promise((done, fail) => {
        // Keys of their own: the other floors leave strings INCRBY would refuse.
        queue.push({ key: `batch-floor:{${subject}}`, done, fail });
        if (queue.length === 32) send();
        else if (queue.length === 1) setImmediate(() => queue.length > 0 && send());
      }),
    prepare: async () => {
      lua.sha = await client.script('LOAD', lua.source);
    },
  };
}

async function cases(client) {
  const list = [
    scriptCase('floor: trivial script', client, { source: 'return 1' }),
    scriptCase('floor: INCR + PEXPIRE', client, {
      source: "local v = redis.call('INCR', KEYS[1]) redis.call('PEXPIRE', KEYS[1], 60000) return v",
    }),
    scriptCase('floor: TIME + GET + SET PX', client, {
      source:
        "local t = redis.call('TIME') local v = redis.call('GET', KEYS[1]) redis.call('SET', KEYS[1], 'abcdefgh', 'PX', 60000) return 1",
    }),
    scriptCase('floor: TIME + GET + SET KEEPTTL', client, {
      source:
        "local t = redis.call('TIME') local v = redis.call('GET', KEYS[1]) if v then redis.call('SET', KEYS[1], 'abcdefgh', 'KEEPTTL') else redis.call('SET', KEYS[1], 'abcdefgh', 'PX', 60000) end return 1",
    }),
    // What a store that batches cannot do without: take each call's key, and write each key once.
    batchCase('floor: batches, keys only', client, { source: 'return 1' }),
    batchCase('floor: batches, INCRBY each key', client, {
      source: "for i = 1, #KEYS do redis.call('INCRBY', KEYS[i], 4) end return 1",
    }),
    // And what a decision cannot do without besides: read each key's state, and reply with each call's
    // numbers (Sluice's five a policy: allowed, remaining, resetMs, retryAfterMs, delayMs); no arithmetic.
    batchCase('floor: batches, MGET, INCRBY each key, 5 numbers back', client, {
      source: `local raws = redis.call('MGET', unpack(KEYS))
local reply = {}
for i = 1, #KEYS do
  redis.call('INCRBY', KEYS[i], 4)
  local r = (i - 1) * 5
  reply[r + 1] = 1 reply[r + 2] = 999999 reply[r + 3] = 59000 reply[r + 4] = 0 reply[r + 5] = 0
end
return reply`,
    }),
  ];
  for (const { label, path } of SLUICE) {
    const core = await loadSluice(path);
    // Default names, as most users have them (they set the key length); a store each, so no limiter
    // warns of another's name. Every case starts on an empty server.
    // A long storeTimeout: on a loaded machine a slow answer must not open the circuit and let the
    // local fallback decide (decisions that never reach Redis); degraded decisions are counted anyway.
    const options = { storeTimeout: '30s' };
    const one = core.createLimiter({
      ...options,
      policies: SLIDING_WINDOW,
      store: new core.RedisStore({ client }),
    });
    const two = core.createLimiter({
      ...options,
      policies: TWO_POLICIES,
      store: new core.RedisStore({ client }),
    });
    list.push(
      {
        name: `sluice ${label}: sliding-window`,
        decide: (s) => one.consume(s),
        keys: 'sluice:*',
      },
      // No memory figure: its token-bucket keys expire within milliseconds at this limit.
      { name: `sluice ${label}: two policies`, decide: (s) => two.consume(s) },
    );
  }
  const flexible = new RateLimiterRedis({ storeClient: client, points: UNREACHED, duration: 60 });
  const fastify = new FastifyRedisStore(false, false, client);
  const rateLimitRedis = new RateLimitRedisStore({ sendCommand: (...args) => client.call(...args) });
  rateLimitRedis.init({ windowMs: 60_000 });
  list.push(
    {
      name: 'rate-limiter-flexible RateLimiterRedis',
      decide: (s) => flexible.consume(s),
      keys: 'rlflx:*',
    },
    { name: 'rate-limit-redis', decide: (s) => rateLimitRedis.increment(s), keys: 'rl:*' },
    {
      name: '@fastify/rate-limit RedisStore',
      decide: (s) =>
        new Promise((done, fail) =>
          fastify.incr(s, (error, result) => (error ? fail(error) : done(result)), 60_000, UNREACHED),
        ),
      keys: 'fastify-rate-limit-*',
    },
  );
  return list.filter((c) => c.name.includes(ONLY));
}

// --- report --------------------------------------------------------------------------------------

function summary(values, digits) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return 'n/a';
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return `${median.toFixed(digits)} [${sorted[0].toFixed(digits)}–${sorted.at(-1).toFixed(digits)}]`;
}

const { port, admin, stop } = await startRedis();
const client = new Redis(port, '127.0.0.1', { enableAutoPipelining: true });
const list = await cases(client);
for (const c of list) {
  await c.prepare?.();
  await c.decide('warm-up');
}
const rounds = new Map(list.map((c) => [c.name, []]));
console.log(
  `redis-server ${(await admin.info('server')).match(/redis_version:(\S+)/)[1]} on port ${port}; ${ROUNDS} rounds × ${CALLS} calls over ${SUBJECTS} subjects, ${IN_FLIGHT} in flight`,
);
for (let round = 0; round < ROUNDS; round++) {
  // A different order each round, so no case always runs right after the same neighbour.
  const order = round % 2 === 0 ? list : [...list].reverse();
  for (const c of order) rounds.get(c.name).push(await measureCpu(admin, c.decide));
  process.stderr.write(`round ${round + 1}/${ROUNDS}\n`);
}
const width = Math.max(...list.map((c) => c.name.length));
const columns = [
  ['Redis CPU ms/1000', (m) => m.cpuPer1000, 2],
  ['EVALSHA µs/call', (m) => m.evalshaUs, 2],
  ['EVALSHA/decision', (m) => m.scriptsPerDecision, 2],
  ['decisions/s', (m) => m.perSecond, 0],
  ['Node CPU ms/1000', (m) => m.nodeCpuPer1000, 2],
];
console.log(`\n${'case'.padEnd(width)}  ${columns.map(([title]) => title.padEnd(24)).join('')}`);
for (const c of list) {
  const r = rounds.get(c.name);
  const cells = columns.map(([, value, digits]) => summary(r.map(value), digits).padEnd(24));
  console.log(`${c.name.padEnd(width)}  ${cells.join('')}`);
}
if (degraded > 0) console.log(`\n${degraded} decisions were taken without Redis (degraded): rerun.`);
if (MEMORY) {
  console.log(`\nRedis memory per subject over ${SUBJECTS} subjects (used_memory delta), with a sample key:`);
  for (const c of list.filter((x) => x.keys !== undefined)) {
    const { bytes, key } = await measureMemory(admin, c.decide, c.keys);
    console.log(`${c.name.padEnd(width)}  ${bytes.toFixed(1).padStart(6)} B  ${key} (${key.length} chars)`);
  }
}
client.disconnect();
admin.disconnect();
stop();

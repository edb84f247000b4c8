/**
 * Redis: from one Node process at 64 calls in flight, decisions per second, p99 latency, Redis CPU
 * per 1,000 decisions (INFO cpu), Redis memory per subject (INFO memory), and scripts (round trips)
 * and commands per decision (INFO commandstats). Sluice on ioredis (every algorithm and two policies
 * in the full run; sliding-window and two policies otherwise), on node-redis and on iovalkey, each
 * beside the peers on the same client: rate-limiter-flexible, rate-limit-redis and @fastify/rate-limit
 * on ioredis, rate-limit-redis on node-redis and on iovalkey (rate-limiter-flexible's RateLimiterValkey
 * runs Valkey-only Lua, `server.call`, which redis-server refuses).
 * And a floor: a bare script doing what any store that batches calls into one script run (up to 32,
 * as Sluice does) cannot do without. The suite starts its own redis-server.
 * And a sliding log held full at limits 10, 1,000 and 10,000 (issue 32 target 4): Redis CPU per call
 * and the key's MEMORY USAGE, on ioredis.
 * And many subjects (issue 32 target 3): 100,000 (and, in the full run, 1,000,000) subjects on ioredis,
 * Sluice's fixed and sliding windows beside rate-limit-redis and the floor at each size.
 */
import * as core from '@sluice/core';
import {
  drive,
  FULL,
  LIMITER_CASES,
  pick,
  policiesOf,
  progress,
  quantile,
  subjects,
  summarize,
  UNREACHED,
  writeResults,
} from '../lib/common.mjs';
import {
  CLIENTS,
  connect,
  fastifyRedis,
  rateLimiterFlexible,
  rateLimitRedis,
  redisUsage,
  sluiceOnRedis,
  startRedis,
} from '../lib/redis.mjs';

const IN_FLIGHT = 64;
/** Limits of the full-log rows (issue 32 target 4): the largest at most 2x the smallest per call. */
const FULL_LOG_LIMITS = [10, 1_000, 10_000];
const settings = pick({
  smoke: { rounds: 1, seconds: 0.3, subjects: 2_000 },
  quick: { rounds: 3, seconds: 0.5, subjects: 10_000 },
  full: { rounds: 5, seconds: 1.5, subjects: 10_000 },
});
const peer = { limit: UNREACHED, windowMs: 60_000 };
/**
 * Many subjects: each size's rounds (a fill of one call per subject, timed at `settings.seconds`), and
 * how long Redis is given to finish rehashing its key tables before memory is read.
 */
const MANY = pick({
  smoke: [{ subjects: 20_000, rounds: 1, settleMs: 500 }],
  quick: [{ subjects: 100_000, rounds: 3, settleMs: 500 }],
  full: [
    { subjects: 100_000, rounds: 5, settleMs: 500 },
    { subjects: 1_000_000, rounds: 3, settleMs: 2_000 },
  ],
});

/**
 * The floor: a turn's calls (up to 32) go to one script run that gets every key, reads them (MGET),
 * writes each once (INCRBY, Redis's cheapest write) and replies with five numbers a call, as a Sluice
 * decision does (allowed, remaining, resetMs, retryAfterMs, delayMs); no arithmetic, no TIME.
 */
async function batchedFloor(client) {
  const sha = await client.script(
    'LOAD',
    `local raws = redis.call('MGET', unpack(KEYS))
local reply = {}
for i = 1, #KEYS do
  redis.call('INCRBY', KEYS[i], 4)
  local r = (i - 1) * 5
  reply[r + 1] = 1 reply[r + 2] = 999999 reply[r + 3] = 59000 reply[r + 4] = 0 reply[r + 5] = 0
end
return reply`,
  );
  let queue = [];
  const send = () => {
    const calls = queue;
    queue = [];
    client.evalsha(sha, calls.length, ...calls.map((c) => c.key)).then(
      () => {
        for (const c of calls) c.done(true);
      },
      (error) => {
        for (const c of calls) c.fail(error);
      },
    );
  };
  return (subject) =>
    new Promise((done, fail) => {
      queue.push({ key: `floor:{${subject}}`, done, fail });
      if (queue.length === 32) send();
      else if (queue.length === 1) setImmediate(() => queue.length > 0 && send());
    });
}

/** A row: what is measured, on which client, and its `call(subject)` (resolves to whether admitted). */
const row = (impl, client, label, limiter) => ({ impl, client, case: label, ...limiter });

/**
 * Sluice's row of `label` on a client. Every row runs on a flushed Redis, so all may share a short
 * name, as the peers' prefixes are short (a key's length is most of a subject's memory; the report
 * shows a key of each).
 */
const sluice = (clients, client, label) =>
  row('sluice', client, label, sluiceOnRedis(clients[client], { name: 'api', policies: policiesOf(label) }));

const rateLimitRedisRow = (clients, client) =>
  row('rate-limit-redis', client, 'RedisStore', rateLimitRedis(clients[client], { ...peer, prefix: 'rlr:' }));

const floorRow = async (clients) =>
  row('floor', 'ioredis', 'batched: MGET, INCRBY each key, 5 numbers back', {
    call: await batchedFloor(clients.ioredis),
  });

/** Every row of this mode. */
async function entries(clients) {
  const labels = FULL ? LIMITER_CASES.map((c) => c.label) : ['sliding-window', 'two policies'];
  return [
    ...labels.map((label) => sluice(clients, 'ioredis', label)),
    sluice(clients, 'node-redis', 'sliding-window'),
    sluice(clients, 'iovalkey', 'sliding-window'),
    row(
      'rate-limiter-flexible',
      'ioredis',
      'RateLimiterRedis',
      rateLimiterFlexible(clients.ioredis, { ...peer, prefix: 'rlf' }),
    ),
    row(
      '@fastify/rate-limit',
      'ioredis',
      'RedisStore',
      fastifyRedis(clients.ioredis, { ...peer, prefix: 'frl-' }),
    ),
    ...CLIENTS.map((c) => rateLimitRedisRow(clients, c)),
    await floorRow(clients),
  ];
}

/** `drive` with this suite's calls in flight; a failing call ends the run. */
const driven = (call, population, until) => drive(call, population, until, { inFlight: IN_FLIGHT });

/** Calls in INFO commandstats (INFO left out): every command, scripts' included, and the scripts alone. */
async function commandCalls(admin) {
  let all = 0;
  let scripts = 0;
  for (const m of (await admin.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (m[1] === 'info') continue;
    all += Number(m[2]);
    if (m[1] === 'evalsha' || m[1] === 'eval') scripts += Number(m[2]);
  }
  return { all, scripts };
}

/** EVALSHA calls and the µs Redis spent running them (INFO commandstats). */
async function scriptTime(admin) {
  const m = /^cmdstat_evalsha:calls=(\d+),usec=(\d+)/m.exec(await admin.info('commandstats'));
  return { calls: Number(m?.[1] ?? 0), usec: Number(m?.[2] ?? 0) };
}

/**
 * Waits for the next minute when the fill and the timed pass might not end in this one. Sluice's windows
 * start at the minute (Redis TIME), so a pass that crosses one rewrites every key's TTL (SET PX in place
 * of INCRBY: once a window per key, and so for rate-limit-redis when a key expires, which no pass here
 * lives to see): inside one window every row is timed in the same steady state. The fill is reckoned
 * at 50,000 calls a second, below any row's.
 */
async function inOneWindow(population, settleMs) {
  const needMs = (population.length / 50_000 + settings.seconds + 1) * 1000 + settleMs;
  const leftMs = 60_000 - (Date.now() % 60_000);
  if (leftMs < needMs) await new Promise((r) => setTimeout(r, leftMs + 50));
}

async function measure(admin, entry, population, withMemory, settleMs = 500) {
  await inOneWindow(population, withMemory ? settleMs : 0);
  await admin.flushall();
  // One call first: script loading and connection buffers are not the subjects' memory.
  await entry.call('warm-up');
  const before = await redisUsage(admin);
  const fill = await driven(entry.call, population, (n) => n >= population.length);
  // Time for Redis to finish rehashing its key table (a table mid-rehash is counted twice).
  if (withMemory) await new Promise((r) => setTimeout(r, settleMs));
  const filled = await redisUsage(admin);
  const sampleKey = withMemory ? await admin.randomkey() : undefined;
  const commandsBefore = await commandCalls(admin);
  const scriptsBefore = await scriptTime(admin);
  const started = process.hrtime.bigint();
  const deadline = Date.now() + settings.seconds * 1000;
  const run = await driven(entry.call, population, () => Date.now() >= deadline);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const commandsAfter = await commandCalls(admin);
  const scriptsAfter = await scriptTime(admin);
  const after = await redisUsage(admin);
  return {
    decisionsPerSec: run.done / seconds,
    p99Ms: quantile(run.latencies, 0.99),
    redisCpuMsPer1000: ((after.cpuSeconds - filled.cpuSeconds) * 1e6) / run.done,
    scriptMsPer1000: (scriptsAfter.usec - scriptsBefore.usec) / run.done,
    bytesPerSubject: withMemory ? (filled.usedMemory - before.usedMemory) / population.length : Number.NaN,
    commandsPerDecision: (commandsAfter.all - commandsBefore.all) / run.done,
    scriptsPerDecision: (commandsAfter.scripts - commandsBefore.scripts) / run.done,
    failed: run.refused + fill.refused,
    sampleKey,
  };
}

/**
 * A sliding log held full on one subject: a caller's clock that moves 1 ms a call and a window of
 * `limit` ms, so after `limit` calls the key holds `limit` entries of cost 1 and every call drops the
 * oldest and records itself, allowed with nothing left (counted when not: `notFull`). Filled at IN_FLIGHT (a turn's calls share one script run), then
 * timed one call at a time, so each call is a script run of its own that reads and writes the whole
 * state (what a subject costs when its calls do not meet in one turn, as with many subjects). Redis CPU
 * per call two ways: the script's own time (INFO commandstats, EVALSHA usec: what the limit can change)
 * and all of Redis's (INFO cpu user + sys, the connection's reads and writes included), over the timed
 * calls; and the key's MEMORY USAGE (SAMPLES 0: all of it).
 */
async function fullLog(admin, client, limit) {
  await admin.flushall();
  let now = 1_700_000_000_000;
  const limiter = core.createLimiter({
    name: `log-${limit}`,
    policies: [{ name: 'full', algorithm: 'sliding-log', limit, window: `${limit}ms` }],
    storeTimeout: '30s',
    store: new core.RedisStore({ client, clock: () => now }),
  });
  let calls = 0;
  let notFull = 0;
  let degraded = 0;
  // The call moves the clock (a call reads it more than once); once full, every call is allowed with
  // nothing left.
  const call = async (s) => {
    now++;
    const d = await limiter.consume(s);
    if (++calls > limit && (!d.allowed || d.remaining !== 0)) notFull++;
    if (d.degraded) degraded++;
    return true;
  };
  const hot = ['hot'];
  await driven(call, hot, (n) => n >= limit + IN_FLIGHT);
  const [key] = await admin.keys('*');
  const bytes = Number(await admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  const before = await redisUsage(admin);
  const scriptsBefore = await scriptTime(admin);
  const deadline = Date.now() + settings.seconds * 1000;
  const run = await drive(call, hot, (n) => n >= 20 && Date.now() >= deadline, { inFlight: 1 });
  const scriptsAfter = await scriptTime(admin);
  const after = await redisUsage(admin);
  return {
    scriptUsPerCall: (scriptsAfter.usec - scriptsBefore.usec) / (scriptsAfter.calls - scriptsBefore.calls),
    redisCpuUsPerCall: ((after.cpuSeconds - before.cpuSeconds) * 1e6) / run.done,
    bytesPerSubject: bytes,
    calls: run.done,
    notFull,
    degraded,
    key,
  };
}

/** The full-log rows: each limit's median over the rounds, in alternating order. */
async function fullLogs(admin, client) {
  const perLimit = new Map(FULL_LOG_LIMITS.map((limit) => [limit, []]));
  for (let round = 0; round < settings.rounds; round++) {
    for (const limit of round % 2 === 0 ? FULL_LOG_LIMITS : [...FULL_LOG_LIMITS].reverse()) {
      perLimit.get(limit).push(await fullLog(admin, client, limit));
    }
  }
  progress('redis: full sliding logs done');
  return FULL_LOG_LIMITS.map((limit) => {
    const rounds = perLimit.get(limit);
    return {
      limit,
      client: 'ioredis',
      scriptUsPerCall: summarize(rounds.map((r) => r.scriptUsPerCall)),
      redisCpuUsPerCall: summarize(rounds.map((r) => r.redisCpuUsPerCall)),
      bytesPerSubject: median(rounds, 'bytesPerSubject'),
      calls: rounds.reduce((n, r) => n + r.calls, 0),
      notFull: rounds.reduce((n, r) => n + r.notFull, 0),
      degraded: rounds.reduce((n, r) => n + r.degraded, 0),
      key: rounds[0].key,
    };
  });
}

/** A row's results: each metric's median and range over its rounds. */
function rowOf(entry, rounds) {
  const metric = (name) => summarize(rounds.map((r) => r[name]));
  return {
    impl: entry.impl,
    client: entry.client,
    case: entry.case,
    decisionsPerSec: metric('decisionsPerSec'),
    p99Ms: metric('p99Ms'),
    redisCpuMsPer1000: metric('redisCpuMsPer1000'),
    scriptMsPer1000: metric('scriptMsPer1000'),
    bytesPerSubject: rounds[0].bytesPerSubject,
    commandsPerDecision: median(rounds, 'commandsPerDecision'),
    scriptsPerDecision: median(rounds, 'scriptsPerDecision'),
    failed: rounds.reduce((n, r) => n + r.failed, 0),
    sampleKey: rounds[0].sampleKey,
    // Sluice decisions taken by the in-process fallback (slower than storeTimeout): not Redis's.
    degraded: entry.degraded?.() ?? 0,
  };
}

/**
 * Many subjects (issue 32 target 3), on ioredis: at each size of MANY, Sluice's fixed and sliding
 * windows, rate-limit-redis and the floor, in alternating order; each row's `subjects` is its size.
 */
async function manySubjects(admin, clients) {
  const out = [];
  for (const { subjects: size, rounds, settleMs } of MANY) {
    const list = [
      sluice(clients, 'ioredis', 'fixed-window'),
      sluice(clients, 'ioredis', 'sliding-window'),
      rateLimitRedisRow(clients, 'ioredis'),
      await floorRow(clients),
    ];
    const label = `${size.toLocaleString('en')} subjects, `;
    const measured = await roundsOf(admin, list, subjects(size), { rounds, settleMs, label });
    out.push(...measured.map((r) => ({ subjects: size, ...r })));
  }
  return out;
}

/**
 * Each row of `list` measured `rounds` times over `population`, memory in the first round, in a
 * different order each round, so that no row always runs right after the same neighbour.
 */
async function roundsOf(admin, list, population, { rounds, settleMs = 500, label = '' }) {
  const perEntry = new Map(list.map((e) => [e, []]));
  for (let round = 0; round < rounds; round++) {
    for (const entry of round % 2 === 0 ? list : [...list].reverse()) {
      perEntry.get(entry).push(await measure(admin, entry, population, round === 0, settleMs));
    }
    progress(`redis: ${label}round ${round + 1}/${rounds} done`);
  }
  return list.map((entry) => rowOf(entry, perEntry.get(entry)));
}

const started = Date.now();
const server = await startRedis();
progress(`redis: redis-server ${server.version} on port ${server.port}`);
const clients = {};
try {
  for (const name of CLIENTS) clients[name] = await connect(name, server.port);
  if (process.argv.includes('--full-log')) {
    // Only the full sliding logs, printed: `node bench/suites/redis.mjs --full-log`.
    console.log(JSON.stringify(await fullLogs(server.admin, clients.ioredis), null, 1));
    process.exit(0);
  }
  if (process.argv.includes('--many')) {
    // Only the many-subject rows, printed: `node bench/suites/redis.mjs --many`.
    console.log(JSON.stringify(await manySubjects(server.admin, clients), null, 1));
    process.exit(0);
  }
  const population = subjects(settings.subjects);
  const rows = await roundsOf(server.admin, await entries(clients), population, settings);
  const manySubjectRows = await manySubjects(server.admin, clients);
  const fullLogRows = await fullLogs(server.admin, clients.ioredis);
  const redisSettings = { ...settings, inFlight: IN_FLIGHT };
  writeResults('redis', {
    settings: redisSettings,
    redisVersion: server.version,
    durationMs: Date.now() - started,
    fullLog: fullLogRows,
    manySubjects: manySubjectRows,
    rows,
  });
} finally {
  for (const client of Object.values(clients)) client.end();
  await server.stop();
}

function median(rounds, name) {
  return summarize(rounds.map((r) => r[name])).median;
}

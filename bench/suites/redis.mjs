/**
 * Suite 2, redis: decisions per second from one Node process at 64 calls in flight (ioredis
 * auto-pipelining), p50/p99 latency, Redis CPU per 1,000 decisions (INFO cpu), Redis memory per
 * 10,000 subjects (INFO memory) and Redis commands per decision (INFO commandstats), for every
 * algorithm and a two-policy limiter, beside rate-limiter-flexible's RateLimiterRedis,
 * rate-limit-redis's RedisStore and @fastify/rate-limit's Redis store. The suite starts its own
 * redis-server on a free loopback port.
 */
import Redis from 'ioredis';
import { progress, SMOKE, writeResults } from '../lib/cli.mjs';
import { LIMITER_CASES, subjects, UNREACHED } from '../lib/policies.mjs';
import {
  fastifyRedis,
  hasSluiceRedisStore,
  rateLimiterFlexible,
  rateLimitRedis,
  sluiceOnRedis,
} from '../lib/redis-limiters.mjs';
import { redisUsage, startRedis } from '../lib/redis-server.mjs';
import { quantile, summarize } from '../lib/stats.mjs';

const IN_FLIGHT = 64;
const SUBJECT_COUNT = SMOKE ? 2_000 : 10_000;
const settings = SMOKE ? { rounds: 1, seconds: 0.3 } : { rounds: 3, seconds: 1.5 };
const WINDOW_MS = 60_000;

/** Every implementation: `call(subject)` resolves to whether the call was admitted. */
function implementations(client) {
  const list = [];
  if (hasSluiceRedisStore) {
    // Every case runs on a flushed Redis, so all may share a name: a short one, as the peers' prefixes
    // are short (a key's length is most of a subject's memory; the report shows each key).
    for (const { label, policies } of LIMITER_CASES) {
      list.push({ impl: 'sluice', label, ...sluiceOnRedis(client, { name: 'api', policies }) });
    }
  }
  const peer = { limit: UNREACHED, windowMs: WINDOW_MS };
  list.push(
    {
      impl: 'rate-limiter-flexible',
      label: 'RateLimiterRedis',
      ...rateLimiterFlexible(client, { ...peer, prefix: 'rlf' }),
    },
    { impl: 'rate-limit-redis', label: 'RedisStore', ...rateLimitRedis(client, { ...peer, prefix: 'rlr:' }) },
    {
      impl: '@fastify/rate-limit',
      label: 'RedisStore',
      ...fastifyRedis(client, { ...peer, prefix: 'frl-' }),
    },
  );
  return list;
}

/** Runs `call` over `subjectsList` round robin with IN_FLIGHT calls outstanding, until `until()`. */
async function drive(call, subjectsList, until) {
  const latencies = [];
  let next = 0;
  let done = 0;
  let failed = 0;
  const worker = async () => {
    while (!until(done)) {
      const s = subjectsList[next];
      if (++next === subjectsList.length) next = 0;
      const t = process.hrtime.bigint();
      const admitted = await call(s);
      latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (!admitted) failed++;
      done++;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { done, failed, latencies };
}

/**
 * Calls counted by INFO commandstats, INFO itself left out: every command, those a script runs
 * included, and the scripts alone (EVALSHA/EVAL: a script call is one round trip).
 */
async function commandCalls(client) {
  const text = await client.info('commandstats');
  let all = 0;
  let scripts = 0;
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (m[1] === 'info') continue;
    all += Number(m[2]);
    if (m[1] === 'evalsha' || m[1] === 'eval') scripts += Number(m[2]);
  }
  return { all, scripts };
}

async function measure(client, entry, population) {
  await client.flushall();
  // One call first: script loading and connection buffers are not counted as the subjects' memory.
  await entry.call('warm-up');
  const before = await redisUsage(client);
  const fill = await drive(entry.call, population, (n) => n >= population.length);
  const filled = await redisUsage(client);
  const sampleKey = await client.randomkey();
  const commandsBefore = await commandCalls(client);
  const started = process.hrtime.bigint();
  const deadline = Date.now() + settings.seconds * 1000;
  const run = await drive(entry.call, population, () => Date.now() >= deadline);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const commandsAfter = await commandCalls(client);
  const after = await redisUsage(client);
  return {
    decisionsPerSec: run.done / seconds,
    p50Ms: quantile(run.latencies, 0.5),
    p99Ms: quantile(run.latencies, 0.99),
    redisCpuMsPer1000: ((after.cpuSeconds - filled.cpuSeconds) * 1e6) / run.done,
    bytesPer10kSubjects: ((filled.usedMemory - before.usedMemory) * 10_000) / population.length,
    commandsPerDecision: (commandsAfter.all - commandsBefore.all) / run.done,
    scriptsPerDecision: (commandsAfter.scripts - commandsBefore.scripts) / run.done,
    failed: run.failed + fill.failed,
    sampleKey,
  };
}

const started = Date.now();
const server = await startRedis();
progress(`redis: redis-server ${server.version} on port ${server.port}`);
const client = new Redis({ port: server.port, host: '127.0.0.1', enableAutoPipelining: true });
try {
  const population = subjects(SUBJECT_COUNT);
  const list = implementations(client);
  const perCase = new Map(list.map((e) => [e, []]));
  for (let round = 0; round < settings.rounds; round++) {
    for (const entry of list) perCase.get(entry).push(await measure(client, entry, population));
    progress(`redis: round ${round + 1}/${settings.rounds} done`);
  }
  const rows = list.map((entry) => {
    const rounds = perCase.get(entry);
    const metric = (name) => summarize(rounds.map((r) => r[name]));
    return {
      impl: entry.impl,
      case: entry.label,
      decisionsPerSec: metric('decisionsPerSec'),
      p50Ms: metric('p50Ms'),
      p99Ms: metric('p99Ms'),
      redisCpuMsPer1000: metric('redisCpuMsPer1000'),
      bytesPerSubject: summarize(rounds.map((r) => r.bytesPer10kSubjects / 10_000)),
      commandsPerDecision: metric('commandsPerDecision'),
      scriptsPerDecision: metric('scriptsPerDecision'),
      failed: rounds.reduce((n, r) => n + r.failed, 0),
      // One of its keys after the fill (for a subject's memory, mostly its key's length).
      sampleKey: rounds[0].sampleKey,
      // Sluice decisions taken by the in-process fallback (a call slower than storeTimeout): not Redis's.
      degraded: entry.degraded?.() ?? 0,
    };
  });
  const file = writeResults('redis', {
    settings: { ...settings, inFlight: IN_FLIGHT, subjects: SUBJECT_COUNT },
    redisVersion: server.version,
    sluiceRedisStore: hasSluiceRedisStore,
    durationMs: Date.now() - started,
    rows,
  });
  progress(`redis: wrote ${file}`);
} finally {
  client.disconnect();
  await server.stop();
}

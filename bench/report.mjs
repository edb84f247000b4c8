/**
 * docs/benchmarks.md, docs/charts/bench-*.svg and the figures other pages quote (docs/stores.md, between
 * `<!-- bench:NAME -->` marks) from a run's results (bench/results by default).
 * `node bench/report.mjs [dir]` rebuilds them without measuring; `--check` only says which differ.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT_DIR, readResults, resultsDir } from './lib/common.mjs';
import { barChart } from './lib/svg.mjs';
import { clients, fixed, kB, pct, range, rate, table, targetsMarkdown } from './lib/targets.mjs';

export const SUITES = ['core', 'redis', 'cluster', 'http', 'atomicity', 'memory', 'postgres', 'edge'];

const LABELS = {
  control: 'control: a second bare app, measured as the limiters are',
  floor: "floor: reads the address, gives Sluice's answer made once",
  'sluice-memory': 'Sluice, memory',
  'sluice-redis': 'Sluice, Redis',
  'erl-memory': 'express-rate-limit, memory',
  'erl-redis': 'express-rate-limit + rate-limit-redis',
  'rlf-memory': 'rate-limiter-flexible, memory (few-line middleware)',
  'rlf-redis': 'rate-limiter-flexible, Redis (few-line middleware)',
  'frl-memory': '@fastify/rate-limit, memory',
  'frl-redis': '@fastify/rate-limit, Redis',
  'hrl-memory': 'hono-rate-limiter, memory',
  'krl-memory': 'koa-ratelimit, memory',
  'nt-memory': '@nestjs/throttler, memory',
  'sluice-default': 'Sluice, MemoryStore (maxKeys default: 1,000,000)',
  'sluice-100k': 'Sluice, MemoryStore maxKeys 100,000',
};
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const kindOf = (impl) =>
  impl.startsWith('sluice') ? 'sluice' : ['bare', 'control', 'floor'].includes(impl) ? 'bare' : 'peer';
const bar = (label, kind, s) => ({ label, kind, value: s?.median, min: s?.min, max: s?.max });
const heading = (r, command, what) => `\`${command}\` · ${what} · ${r.mode} run of ${r.date}`;

function coreSection(core, charts) {
  const shapes = [...new Set(core.rows.map((r) => r.subjects))];
  const name = (r) => `${r.path === 'denied' ? 'denied: ' : ''}${r.impl} ${r.case}, \`${r.api}\``;
  const names = [...new Set(core.rows.map(name))];
  const cell = (n, s) => core.rows.find((r) => name(r) === n && r.subjects === s)?.opsPerSec;
  charts['bench-core.svg'] = barChart({
    title: 'In-process decisions per second (memory stores)',
    subtitle: `median of ${core.settings.rounds} interleaved rounds, whiskers min–max`,
    groups: shapes.map((s) => ({
      label: s === 'hot' ? 'one hot subject' : `${s} subjects, round robin`,
      bars: core.rows
        .filter(
          (r) =>
            r.subjects === s && r.path === 'allowed' && (r.impl !== 'sluice' || r.case === 'sliding-window'),
        )
        .map((r) =>
          bar(
            `${r.impl === 'sluice' ? 'Sluice sliding-window' : r.impl} ${r.api}`,
            r.impl.endsWith('floor') ? 'bare' : kindOf(r.impl),
            r.opsPerSec,
          ),
        ),
    })),
    format: (v) => `${rate(v)}/s`,
  });
  const what = `${core.settings.rounds} interleaved rounds of ${core.settings.timeMs} ms per case, each in a fresh process`;
  return `## 1. Core: in-process decisions per second

${heading(core, 'pnpm bench:core', what)}

"hot" is one subject; "${shapes[1] ?? ''}" is ${core.settings.subjects.toLocaleString('en')} subjects round robin, all known before timing. Limits are never
reached on the allowed path; the denied path is one subject over a limit of 100 an hour. \`consume\` is the promise API,
\`decide\` the synchronous path the adapters use. The peers count a fixed window and return a counter, not a decision.
@fastify/rate-limit's LocalStore is the plugin's internal counter (not exported), shown here; the plugin itself is
compared in the HTTP suite. The **fused floor** is \`consume\` fused into one function: a subject check, a clock read
shared by 32 calls, Sluice's own sliding-window step on the state in a Map, and a fresh Decision (its policies array,
one policy state, a refund) through a resolved promise; no key encoding, expiry, eviction or layering. No Sluice \`consume\`
can be faster, and where the floor is not ahead of express-rate-limit (whose \`increment\` gives back the object it
keeps), no \`consume\` keeping the contract is. \`node bench/suites/core.mjs --profile\` shows where a call's time goes.
Policies: windows 1e9 a minute; sliding-log 100 per 10 s; buckets 1,000 an hour, capacity 1e8; concurrency 100 leases,
each released at once; two policies = sliding-window + token bucket.

![core chart](charts/bench-core.svg)

${table(
  ['calls/s (median, min–max)', ...shapes],
  names.map((n) => [n, ...shapes.map((s) => range(cell(n, s), rate))]),
)}
`;
}

function redisSection(redis, charts) {
  const label = (r) => `${r.impl === 'sluice' ? 'Sluice' : r.impl} ${r.case}, ${r.client}`;
  const rows = redis.rows.map((r) => [
    label(r),
    range(r.decisionsPerSec, rate),
    range(r.p99Ms, fixed(2)),
    range(r.redisCpuMsPer1000, fixed(2)),
    fixed(0)(r.bytesPerSubject),
    r.scriptsPerDecision.toFixed(2),
    r.commandsPerDecision.toFixed(2),
    `${r.failed}, ${r.degraded}`,
  ]);
  const kind = (r) => (r.impl === 'floor' ? 'bare' : kindOf(r.impl));
  charts['bench-redis.svg'] = barChart({
    title: 'Redis: decisions per second at 64 in flight (one Node process)',
    subtitle: `local redis-server ${redis.redisVersion}; median of ${redis.settings.rounds} rounds, whiskers min–max`,
    groups: [
      {
        label: 'decisions per second',
        bars: redis.rows.map((r) => bar(label(r), kind(r), r.decisionsPerSec)),
      },
    ],
    format: (v) => `${rate(v)}/s`,
  });
  const keys = redis.rows.filter(
    (r) => r.sampleKey && r.impl !== 'floor' && !/two|log|bucket|gcra/.test(r.case),
  );
  const what = `redis-server ${redis.redisVersion} started by the suite · ${redis.settings.rounds} rounds in alternating order`;
  return `## 2. Redis

${heading(redis, 'pnpm bench:redis', what)}

One Node process, ${redis.settings.inFlight} calls in flight, ${redis.settings.subjects.toLocaleString('en')} subjects round robin for ${redis.settings.seconds} s a round, after one call per
subject (that pass measures memory in the first round: \`INFO memory\` before and after, once Redis has rehashed). ioredis and
iovalkey run with auto-pipelining; node-redis writes a turn's commands together by itself (Sluice's store sends the first
batch of a turn at once and the rest a turn later, so Redis starts on one while the next is made). Redis CPU is the \`INFO cpu\`
user + sys delta over the timed pass. "Scripts" counts EVALSHA/EVAL per decision (one script call is one round trip;
Sluice sends a turn's calls in one); "commands" counts every command Redis ran, scripts' included. Each client's Sluice
row meets the peers on the same client: rate-limit-redis through its \`sendCommand\` option on node-redis and iovalkey
(rate-limiter-flexible's RateLimiterValkey runs Valkey-only Lua, \`server.call\`, which redis-server refuses). The floor is a
bare script doing what a store that batches calls into one script run cannot do without: read each key, write each once,
reply with five numbers a call. A subject's memory is mostly its key: ${keys.map((r) => `${label(r)} \`${r.sampleKey}\``).join(', ')}.

![redis chart](charts/bench-redis.svg)

${table(['', 'decisions/s', 'p99 ms', 'Redis CPU ms / 1000', 'bytes / subject', 'scripts / decision', 'commands / decision', 'not admitted, decided without Redis'], rows)}
${manySubjectsTable(redis, label)}`;
}

/** The Redis suite's many-subject rows (target 10), one table with a size per group of rows. */
function manySubjectsTable(redis, label) {
  const many = redis.manySubjects ?? [];
  if (many.length === 0) return '';
  const rounds = [...new Set(many.map((r) => r.decisionsPerSec.rounds.length))].join(' or ');
  const rows = many.map((r) => [
    r.subjects.toLocaleString('en'),
    label(r),
    range(r.decisionsPerSec, rate),
    range(r.redisCpuMsPer1000, fixed(2)),
    range(r.scriptMsPer1000, fixed(2)),
    fixed(0)(r.bytesPerSubject),
    `${r.failed}, ${r.degraded}`,
  ]);
  return `
**Many subjects** (ioredis, the same ${redis.settings.inFlight} in flight): at each size, every row fills Redis with one
call per subject, then is timed for ${redis.settings.seconds} s round robin over the subjects (rounds in
alternating order: ${rounds}, median and min–max), so a call finds its key among all the others and rarely shares a script run with its own subject's
earlier call. "Script ms" is the part of Redis CPU spent in EVALSHA (\`INFO commandstats\`); the rest is reading
commands and writing replies.

${table(['subjects', '', 'decisions/s', 'Redis CPU ms / 1000', 'script ms / 1000', 'bytes / subject', 'not admitted, decided without Redis'], rows)}
`;
}

function httpSection(http, charts) {
  const scenarios = [
    ...new Set(http.rows.filter((r) => r.kind !== 'bare').map((r) => `${r.path}|${r.subjects}`)),
  ];
  const scenarioLabel = (s) => `${s.split('|')[0]}, ${clients(Number(s.split('|')[1]))}`;
  const sections = [];
  const groups = [];
  for (const framework of new Set(http.rows.map((r) => r.framework))) {
    const limited = http.rows.filter((r) => r.framework === framework && r.kind !== 'bare');
    const bare = http.rows.find((r) => r.framework === framework && r.kind === 'bare');
    const at = (kind, s) => limited.find((r) => r.kind === kind && `${r.path}|${r.subjects}` === s);
    const cell = (r) =>
      r === undefined
        ? ''
        : `${range(r.ratioToBare, pct)}${r.onPath < 0.99 ? ` ⚠ ${pct(r.onPath)} on path` : ''}; ${rate(r.rps.median)}/s, p99 ${r.p99Ms.median.toFixed(1)} ms`;
    const kinds = [...new Set(limited.map((r) => r.kind))];
    const rows = kinds.map((kind) => [LABELS[kind], ...scenarios.map((s) => cell(at(kind, s)))]);
    sections.push(`### ${framework} (bare: ${range(bare.rps, rate)} requests/s over all its runs)

${table(['share of bare (median, min–max); requests/s, p99', ...scenarios.map(scenarioLabel)], rows)}`);
    for (const s of scenarios) {
      const bars = kinds.filter((k) => at(k, s)).map((k) => bar(LABELS[k], kindOf(k), at(k, s).ratioToBare));
      groups.push({ label: `${framework}, ${scenarioLabel(s)}`, bars });
    }
  }
  const { tool, rounds, seconds, inProcess: ip } = http.settings;
  charts['bench-http.svg'] = barChart({
    title: 'HTTP: throughput as a share of the bare app (same round)',
    subtitle: `hello world, one server process, load by ${tool.name}; median of ${rounds} rounds, whiskers min–max`,
    groups,
    format: pct,
  });
  const inProcess = http.inProcess.map((r) => [
    r.framework,
    clients(r.subjects),
    r.variant,
    `${r.status}`,
    range(r.usPerRequest, fixed(2)),
  ]);
  const idle =
    http.settings.warmSeconds > 0
      ? 'takes an unmeasured run first'
      : 'is measured as is in this run (the full run gives it an unmeasured run first), Sluice and the peers alike';
  const what = `load by ${tool.name} ${tool.version} (${tool.connections} connections) in its own process · ${rounds} rounds of ${seconds} s per run`;
  return `## 3. HTTP

${heading(http, 'pnpm bench:http', what)}

Each server is a hello-world app in its own process (\`bench/lib/apps.mjs\`): bare, or with one limiter on \`/allowed\` (limit
never reached) and \`/denied\` (1 an hour: every measured request is answered 429). Trust proxy is on and the client
address comes from X-Forwarded-For (on Hono, which has no such setting, both limiters read the header). Hono (on
@hono/node-server), Koa and NestJS (on Express) each run Sluice beside that framework's usual limiter: hono-rate-limiter,
koa-ratelimit (memory driver) and @nestjs/throttler (its guard global, \`@Throttle\` per route), with 10,000 clients
when a run has several client counts. Every limiter runs with its defaults otherwise (Sluice sends draft-10 RateLimit
headers and problem+json 429 bodies; rate-limiter-flexible sits behind the few-line middleware of its README and sends no
headers). The bare Fastify app registers one empty plugin: Fastify serves every request slower once any plugin is
registered and a second costs nothing more (\`node bench/suites/http.mjs --inprocess fastify --variants no-plugin,bare\`), so
the limiters, plugins themselves, are not charged for Fastify's first. This machine's speed drifts by tens of percent within
seconds, so each limited run sits between two runs of its bare app and its share is to the mean of the two. A server idle
for more than 3 s (a Node server runs its first second after a pause about a fifth slower) ${idle}. The control, when
present, is a second bare app measured as the limiters are: its distance from 100% is the method's own error. The floor
reads the client address and gives every request Sluice's answer for its route, made once: no limiter answering as
Sluice does can cost less. A ⚠ gives the share of answers on the path measured when under 99% (@fastify/rate-limit keeps
5,000 clients by default and forgets the others): such a row is no peer in the targets.

![http chart](charts/bench-http.svg)

${sections.join('\n\n')}

### In process: CPU per request

The same apps, each with only the route measured, serve requests made in process on Node's own request and response objects
over a socket that drops what is written (\`node bench/suites/http.mjs --inprocess\`, with \`--profile\` by function). Each
variant runs in processes of its own, in turn, ${ip.runs} runs; a run's figure is the fastest of 3 rounds of ${ip.requests.express.toLocaleString('en')} (Express) or
${ip.requests.fastify.toLocaleString('en')} (Fastify) requests, after every client has made its first. "floor" reads the address and sets Sluice's two RateLimit
fields; "floor/denied" answers 429 with Sluice's headers and body. Target 2 is Sluice's distance from these, run by run.

${table(['framework', 'clients', 'variant', 'status', 'CPU µs / request (median, min–max of runs)'], inProcess)}
`;
}

function clusterSection(cluster) {
  const { workers, inFlight, subjects, rounds, seconds } = cluster.settings;
  const rows = cluster.rows.map((r) => [
    `${r.impl} ${r.case}`,
    range(r.decisionsPerSec, rate),
    range(r.primaryUsPerDecision, fixed(1)),
    `${r.failed}, ${r.degraded}`,
  ]);
  const what = `${workers} workers, ${inFlight} calls in flight in each, ${subjects.toLocaleString('en')} subjects · ${rounds} rounds of ${seconds} s per limiter, alternating`;
  return `## 4. Node cluster without Redis

${heading(cluster, 'pnpm bench:cluster', what)}

One primary holds both \`ClusterStore.primary()\` and rate-limiter-flexible's \`RateLimiterClusterMaster\`; each worker has a
Sluice limiter on \`new ClusterStore()\` (sliding-window, \`storeTimeout: '10s'\`, so that a late answer is waited for) and a
\`RateLimiterCluster\`, and the primary tells every worker which to call in each phase. Decisions per second are over the
workers together; the primary's CPU is \`process.cpuUsage()\` over the phase, per decision (it does nothing else).

${table(['', 'decisions/s', "primary's CPU µs / decision", 'not admitted, decided without the primary'], rows)}
`;
}

function atomicitySection(atomicity, charts) {
  const { limit, wideLimit, processes, callsPerProcess } = atomicity.settings;
  const name = (c) => c.replace(/^sluice:?/, 'Sluice ').trim();
  const single = atomicity.rows.filter((r) => r.variant === 'one policy');
  const two = atomicity.rows.filter((r) => r.variant === 'two policies');
  charts['bench-atomicity.svg'] = barChart({
    title: 'Two policies under 2,000 concurrent calls: wide quota burned by denied calls',
    subtitle: `limit ${limit} (strict) and ${wideLimit.toLocaleString('en')} (wide), ${processes} processes × ${callsPerProcess} calls on one subject`,
    groups: [
      {
        label: 'charged to the wide policy but denied (0 is correct)',
        bars: two.map((r) => ({ label: name(r.case), kind: kindOf(r.case), value: r.burned })),
      },
    ],
    format: String,
  });
  const what = `${processes} processes × ${callsPerProcess} concurrent calls on one subject, limit ${limit} in an hour, one redis-server`;
  return `## 5. Atomicity

${heading(atomicity, 'node bench/run.mjs atomicity', what)}

Sluice runs with \`storeTimeout: '10s'\`, so that a slow answer under this burst is waited for rather than decided in
process by the fallback; "decided without Redis" counts any that still was. The peers' counts follow each library's rule.
With two policies (strict ${limit}, wide ${wideLimit.toLocaleString('en')}) the peers, which have no multi-policy call, run two limiters in series as
usually mounted (rate-limiter-flexible: its \`RateLimiterUnion\`).

${table(
  ['one policy', `admitted of ${single[0]?.calls}`, 'decided without Redis'],
  single.map((r) => [name(r.case), r.admitted, r.degraded]),
)}

![atomicity chart](charts/bench-atomicity.svg)

${table(
  ['two policies', 'how', 'admitted', 'charged to the wide policy', 'burned by denied calls'],
  two.map((r) => [name(r.case), r.order, r.admitted, r.wideCharged, r.burned]),
)}
`;
}

function memorySection(memory, charts) {
  const n = memory.settings.subjects;
  const bare = memory.rows.find((r) => r.config === 'bare');
  const label = (r) => LABELS[r.config] ?? 'bare app (no limiter)';
  const over = (r, field, f) => (r === bare ? '' : f(r.after[field] - bare.after[field]));
  const rows = memory.rows.map((r) => [
    label(r),
    mib(r.after.rss),
    over(r, 'rss', mib),
    mib(r.after.heapUsed),
    over(r, 'heapUsed', (x) => `${(x / n).toFixed(0)} B`),
  ]);
  charts['bench-memory.svg'] = barChart({
    title: `Resident memory of an Express app after ${n.toLocaleString('en')} distinct clients`,
    subtitle: 'RSS after full GCs; one fresh process per configuration',
    groups: [
      {
        label: 'resident set size (MiB)',
        bars: memory.rows.map((r) => ({
          label: label(r),
          kind: kindOf(r.config),
          value: r.after.rss / 2 ** 20,
        })),
      },
    ],
    format: (v) => `${v.toFixed(0)} MiB`,
  });
  return `## 6. Memory

${heading(memory, 'node bench/run.mjs memory', `${n.toLocaleString('en')} distinct client addresses, one request each`)}

Each configuration is a fresh process holding an Express app (trust proxy on) with the limiter mounted; the requests go to
its middleware in process with Express's own request object and a stub response (what is measured is what the limiter
holds), then three forced GCs. "per client" is the heap growth over the bare app divided by the clients (for maxKeys
100,000, spread over all of them while 100,000 are held).

![memory chart](charts/bench-memory.svg)

${table(['', 'resident (RSS)', 'over bare', 'heap used', 'heap per client'], rows)}
`;
}

function postgresSection(postgres) {
  const { inFlight, poolSize, rounds, seconds, subjects } = postgres.settings;
  const rows = postgres.rows.map((r) => [
    `${r.impl === 'sluice' ? 'Sluice' : r.impl} ${r.case}`,
    r.subjects === 'hot' ? 'one hot subject' : `${subjects.toLocaleString('en')}, round robin`,
    range(r.decisionsPerSec, rate),
    range(r.p99Ms, fixed(1)),
    `${r.failed}, ${r.degraded}`,
  ]);
  const { cross, churn } = postgres;
  const timeline = churn.samples.map((s) => [
    `${s.t.toFixed(1)}`,
    s.rows.toLocaleString('en'),
    s.live.toLocaleString('en'),
    s.dead.toLocaleString('en'),
  ]);
  const what = `PostgreSQL ${postgres.postgresVersion.split(' ')[0]} started by the suite, pg ${postgres.pgVersion} · ${rounds} rounds of ${seconds} s in alternating order`;
  return `## 7. PostgreSQL

${heading(postgres, 'pnpm bench:postgres', what)}
${
  postgres.mode === 'full'
    ? ''
    : `\n**From a ${postgres.mode} run of this suite alone, not the publication run**: fewer rounds, a ${postgres.settings.crossSeconds} s crossing run (60 s in the full run).\n`
}
One server for the three parts, started as the tests start theirs (initdb as the \`postgres\` user, a free loopback port,
fsync and synchronous_commit off: the disk is not what is measured). Every limiter is on a \`pg\` Pool of ${poolSize} connections
(pg's default), one pool per row. One Node process keeps ${inFlight} calls in flight over ${subjects.toLocaleString('en')} subjects round robin (each
subject called once before the first timed pass, so that updates are measured, not inserts), or on one hot subject.
Sluice's PostgresStore sends the calls of one event-loop turn as one statement; rate-limiter-flexible's
RateLimiterPostgres (fixed window) sends one upsert per call, and for two limiters its \`RateLimiterUnion\` sends two.
Limits are never reached. Sluice's two policies are a sliding window and a token bucket, decided together.

${table(['', 'subjects', 'decisions/s', 'p99 ms', 'not admitted or failed, decided without PostgreSQL'], rows)}

**Crossed keys.** ${cross.workers} processes, each with a pool of 2 and 16 calls in flight, call for ${cross.seconds} s two limiters whose
policies each process lists in a different order (the same names, so the same rows): three policies on a subject, and a
global policy beside a subject's. Every call picks one of 200 shared subjects at random. ${cross.calls.toLocaleString('en')} calls:
**${cross.deadlocks}** deadlocks (\`pg_stat_database.deadlocks\`, before and after), **${cross.errors}** errors (calls that
failed and store errors), ${cross.degraded} decided without PostgreSQL. The counter is shown to count: one deadlock made on
purpose afterwards (two transactions, two rows, opposite orders) moved it by ${cross.counterCheck}.

**Expired rows.** ${churn.subjects.toLocaleString('en')} subjects each call a limiter of a 1 s window once; then ${churn.trafficSeconds} s of ordinary traffic
(300 other subjects, ${inFlight} in flight, ${churn.trafficCalls.toLocaleString('en')} calls) on the same limiter, the app calling nothing but \`consume\`:
each statement deletes a bounded number of expired rows it can lock without waiting. Rows are \`count(*)\`; live and dead
tuples are \`pg_stat_user_tables\`, which lags by up to a second (the last line is read once the pool has closed). The
0 s line is what the fill left: when it takes longer than a row lives (2 s here), its own later calls have swept the
rows of its first subjects already.

${table(['s into the traffic', 'rows', 'n_live_tup', 'n_dead_tup'], timeline)}
`;
}

/**
 * Figures quoted outside the benchmark page, each from the results: a page holds one between
 * `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`, and `writeReport` rewrites it there.
 */
const QUOTES = {
  'cluster-cost': {
    page: 'docs/stores.md',
    needs: ['cluster'],
    text({ cluster }) {
      const row = (impl) => cluster.rows.find((r) => r.impl === impl);
      const [sluice, rlf] = [row('sluice'), row('rate-limiter-flexible')];
      const { workers, inFlight } = cluster.settings;
      const perSecond = (r) => `${rate(r.decisionsPerSec.median)} decisions a second`;
      const cpu = (r) => `${fixed(1)(r.primaryUsPerDecision.median)} µs`;
      return `In the benchmark run (${cluster.date.slice(0, 10)}, [docs/benchmarks.md](benchmarks.md#4-node-cluster-without-redis)), ${workers} workers
  with ${inFlight} calls in flight each got ${perSecond(sluice)}, at ${cpu(sluice)} of the primary's CPU per
  decision (rate-limiter-flexible's \`RateLimiterCluster\`, in the same run: ${perSecond(rlf)} at ${cpu(rlf)}).`;
    },
  },
};

/** `text` with the quote NAME between its marks replaced by `figure`; throws when the marks are missing. */
export function withQuote(text, name, figure) {
  const pattern = new RegExp(`(<!-- bench:${name} -->)[\\s\\S]*?(<!-- /bench:${name} -->)`);
  if (!pattern.test(text)) throw new Error(`no <!-- bench:${name} --> marks in the page that quotes it`);
  return text.replace(pattern, (_, open, close) => `${open}\n  ${figure}\n  ${close}`);
}

/** Every file the results make, by path from the repository root, with its content. */
export function renderReport(dir = resultsDir('full')) {
  const results = readResults(dir, [...SUITES, 'environment']);
  const charts = {};
  const files = { 'docs/benchmarks.md': formatted(pageOf(results, charts)) };
  for (const [name, svg] of Object.entries(charts)) files[`docs/charts/${name}`] = svg;
  for (const [name, quote] of Object.entries(QUOTES)) {
    if (quote.needs.some((suite) => results[suite] === undefined)) continue;
    const page = files[quote.page] ?? readFileSync(join(ROOT_DIR, quote.page), 'utf8');
    files[quote.page] = withQuote(page, name, quote.text(results));
  }
  return files;
}

/** The page as the repository's formatter lays it out (it owns markdown tables; the page must pass lint). */
function formatted(markdown) {
  const biome = join(ROOT_DIR, 'node_modules/.bin/biome');
  const run = spawnSync(biome, ['format', '--stdin-file-path=docs/benchmarks.md'], {
    cwd: ROOT_DIR,
    input: markdown,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`biome could not format the page: ${run.stderr}`);
  return run.stdout;
}

/** Writes the page, the charts and the quoted figures from the results in `dir`; returns what it wrote. */
export function writeReport(dir = resultsDir('full')) {
  const files = renderReport(dir);
  mkdirSync(join(ROOT_DIR, 'docs/charts'), { recursive: true });
  for (const [path, content] of Object.entries(files)) writeFileSync(join(ROOT_DIR, path), content);
  return Object.keys(files);
}

/** The files that differ from what the results in `dir` make. */
export function staleReport(dir = resultsDir('full')) {
  return Object.entries(renderReport(dir))
    .filter(([path, content]) => {
      try {
        return readFileSync(join(ROOT_DIR, path), 'utf8') !== content;
      } catch {
        return true;
      }
    })
    .map(([path]) => path);
}

function edgeSection(edge) {
  const bundles = edge.bundles.map((b) => [
    b.label,
    kB(b.minifiedBytes),
    kB(b.gzipBytes),
    b.nodeImports.length === 0 ? 'none' : b.nodeImports.join(', '),
  ]);
  const floor = (edge.floor?.rows ?? []).map((f) => [
    f.job,
    f.leftOut ? 'left out' : 'whole',
    kB(f.minifiedBytes),
    kB(f.gzipBytes),
  ]);
  const rows = edge.rows.map((r) => [
    r.label,
    r.path,
    range(r.requestsPerDecision, fixed(2)),
    range(r.cpuUsPerDecision, fixed(0)),
    Object.entries(r.statuses)
      .map(([status, n]) => `${n.toLocaleString('en')} × ${status}`)
      .join(', '),
  ]);
  const { rounds, decisions, subjects } = edge.settings;
  const what = `${edge.server}, behind a stand-in for Upstash's REST API · ${rounds} rounds of ${decisions.toLocaleString('en')} decisions in alternating order`;
  return `## 8. Edge

${heading(edge, 'node bench/run.mjs edge', what)}

The same job twice (\`bench/lib/edge/\`): a fetch handler limited per client address by two sliding windows, 10 a
second and 20 a minute in the denied runs (never reached in the allowed runs), answering with RateLimit fields and a
429 body. Sluice is \`@sluice/fetch\` with \`RedisStore\` on an \`@upstash/redis\` client, both policies decided together;
@upstash/ratelimit is two \`Ratelimit\` limiters called together (\`Promise.all\`, which @upstash/redis pipelines into one
request; not atomic), with the fields and the body written by the app, as its documentation shows.

**Bundle**: esbuild, minified and tree-shaken, browser platform with workerd's conditions, gzip level 9; \`@upstash/redis\`,
the same client in both, is left out of both.

${table(['', 'minified', 'gzip', 'Node built-ins imported'], bundles)}
${
  floor.length === 0
    ? ''
    : `
**The floor** (\`bench/lib/edge/floor.mjs\`): Sluice's bundle from its sources, for the job above and for a limiter alone
(\`createLimiter\` and \`RedisStore\` deciding the same two policies, no HTTP layer), each whole and with what two sliding
windows never run left out (replaced by empty modules, sized and never run): ${edge.floor.leftOutFiles.map((f) => `\`${f}\``).join(', ')}.
A policy names its algorithm by a string and one options object carries every HTTP feature, so a bundler keeps them all.

${table(['', 'parts', 'minified', 'gzip'], floor)}
`
}
**Per decision**, one at a time over ${subjects.toLocaleString('en')} client addresses (allowed) or one address past its limits (denied):
HTTP requests the stand-in (\`scripts/upstash-rest.cjs\`, in a process of its own, in front of a real server) answered, and
CPU in the app's process (the handler, the client and Node's fetch). Sluice keeps no denial of a sliding window
in its deny cache (the window's \`remaining\` changes with time alone, and its headers are exact); @upstash/ratelimit's
ephemeral cache refuses locally until the window's reset.

${table(['', 'path', 'requests a decision', 'CPU µs a decision', 'answers'], rows)}
`;
}

/** The page's markdown (before formatting); each chart it draws goes to `charts`. */
function pageOf(results, charts) {
  const env = results.environment;
  const sections = { core: coreSection, redis: redisSection, http: httpSection, cluster: clusterSection };
  Object.assign(sections, { atomicity: atomicitySection, memory: memorySection, postgres: postgresSection });
  sections.edge = edgeSection;
  const body = Object.entries(sections).flatMap(([suite, section]) =>
    results[suite] ? [section(results[suite], charts)] : [],
  );
  const packages = Object.entries(env.packages).map(([name, v]) => `${name} ${v}`);
  const markdown = `# Benchmarks

Sluice beside the libraries it replaces, each cell measured in one run. \`pnpm bench\` runs a representative pass (fewer
rounds and cells, the same method) in about 4 minutes and prints the targets; \`pnpm bench --full\` is the publication run,
which writes this page and its charts from \`bench/results/*.json\` (\`node bench/report.mjs\` rebuilds them).
${env.mode === 'full' ? '' : `\n**This page was written from a ${env.mode} run, not the publication run**: its rounds are fewer and its machine may have been busy. Run \`pnpm bench --full\` on a quiet machine before quoting it.\n`}
## Targets

Where Sluice stands, from the run below. **1. Against the peers**: in every cell of the core, Redis, HTTP and cluster
suites, Sluice's median against the best peer's median in the same cell, with both ranges (min–max over rounds); met when
Sluice is ahead or the ranges overlap (this machine cannot tell those apart), behind when Sluice's whole range is worse.
The core \`consume\` cells are against express-rate-limit's \`increment\`, which gives back the counter it keeps where
\`consume\` answers with a fresh Decision through a promise: the note gives the fused floor, \`consume\` fused into one
function (section 1); where that floor is not ahead either, no \`consume\` keeping the contract is. The \`consume\` cells
(millions a second, far above any server's request rate) are reported, not judged; \`decide\`, what the adapters call,
is judged beside it. **2. Sluice's own cost** over the floor any limiter answering as Sluice does pays, in process
(section 3), is reported and not judged: the floor's own spread between runs was larger than the cost in half the cells,
so the HTTP cells judge Sluice against the peers only. **3. Redis**: at most 2.4 ms of Redis CPU per 1,000 sliding-window decisions, one round
trip, at most 145 B per subject. **4. Atomicity**: exactly the limit admitted and no quota burned, for every algorithm
and for two policies. **5. PostgreSQL** (section 7): at 64 in flight, one policy at least 2× RateLimiterPostgres's
decisions/s and two policies at least 1.5× two RateLimiterPostgres; no deadlock and no error with keys crossed between 8
processes; 20,000 expired subjects' rows down below a quarter within 5 s of traffic that only calls \`consume\`.
**6. Edge** (section 8): a fetch handler with two limits bundled at most 1.5× @upstash/ratelimit's for the same job
(gzip), with no Node built-in in it, and one HTTP request to Redis per decision of both policies. **7. Node cluster**
(section 4): at 4 workers, ClusterStore at least 2× RateLimiterCluster's decisions/s, at most half its CPU per decision in
the primary, with no call failed or degraded. **8. Redis on node-redis** (section 2): Sluice's sliding window on node-redis
at least 1.5× rate-limit-redis's on node-redis, and at least 0.85× Sluice's own on ioredis. **9. Sliding log at large
limits**: a call on a full sliding log of limit 10,000 at most 2× one of limit 10, in memory and on Redis.
**10. Redis at many subjects** (section 2): at 100,000 and 1,000,000 subjects on ioredis, in the same run, Sluice's
fixed window at most 0.8× rate-limit-redis's Redis CPU per decision and its sliding window at most 1.0×, each at
least 1.5× its decisions/s, and at most 145 B per subject.
**11. Fastify, memory, allowed** (target 1's cells of it, drawn out): Sluice ahead of or level with @fastify/rate-limit.

${targetsMarkdown(results)}
## The run

- Machine: ${env.cpu}, ${env.cores} cores, ${env.memoryGiB} GiB, ${env.os}; load average at the start ${env.loadAverage.join(' / ')}
- Node ${env.node}, Redis ${env.redis}; commit ${env.commit}${env.dirty ? ' (with uncommitted changes)' : ''}
- Packages: ${packages.join(', ')}
- Command: \`${env.command}\` (${env.mode} run), suites ${env.suites.join(', ')}, started ${env.date}, ${env.totalSeconds.toFixed(0)} s in all

**Reading the numbers.** Each figure is the median over interleaved rounds with its min–max in parentheses; only
differences larger than both ranges mean anything. On this 2-core machine the in-process numbers (core, HTTP in process,
memory) are the steady ones; Redis, cluster and HTTP-over-loopback numbers share two cores between the app, Redis and the
load generator and move by 10–20% between runs: compare them within one run, not across runs or machines.

${body.join('\n')}`;
  return markdown;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [dir] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (process.argv.includes('--check')) {
    const stale = staleReport(dir);
    console.log(
      stale.length === 0
        ? 'the docs quote bench/results as they are'
        : `not what the results make: ${stale.join(', ')} (run: node bench/report.mjs)`,
    );
    process.exitCode = stale.length === 0 ? 0 : 1;
  } else console.log(`wrote ${writeReport(dir).join(', ')}`);
}

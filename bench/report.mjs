/**
 * docs/benchmarks.md and docs/charts/bench-*.svg from the results in bench/results (or the given
 * directory). `node bench/report.mjs` rebuilds them without measuring again.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT_DIR, resultsDir } from './lib/cli.mjs';
import { barChart } from './lib/svg.mjs';
import { checkTargets, TARGETS } from './lib/targets.mjs';

const SUITES = ['core', 'redis', 'http', 'atomicity', 'memory'];
/** A spread (max − min over rounds, as a share of the median) above this is marked as noisy. */
const NOISY = 0.1;

function readResults(dir) {
  const results = {};
  for (const name of [...SUITES, 'environment']) {
    const file = join(dir, `${name}.json`);
    if (existsSync(file)) results[name] = JSON.parse(readFileSync(file, 'utf8'));
  }
  return results;
}

const rate = (x) =>
  !Number.isFinite(x)
    ? '–'
    : x >= 1e6
      ? `${(x / 1e6).toFixed(2)}M`
      : x >= 1e3
        ? `${(x / 1e3).toFixed(1)}k`
        : x.toFixed(0);
const ms = (x) => (Number.isFinite(x) ? x.toFixed(2) : '–');
const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : '–');
const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
/** Inline code that survives backticks and table pipes in what it quotes. */
const code = (text) => (text.includes('`') ? `\`\` ${text} \`\`` : `\`${text}\``).replaceAll('|', '\\|');

/** "median (min–max)", with a ~ when the spread is above NOISY. */
function spread(s, format) {
  if (s === undefined || !Number.isFinite(s.median)) return '–';
  const noisy = s.spread > NOISY ? ' ~' : '';
  return s.rounds.length > 1
    ? `${format(s.median)} (${format(s.min)}–${format(s.max)})${noisy}`
    : format(s.median);
}

function table(header, rows) {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

/** The colour of a row: Sluice, a peer, or one of the servers that limit nothing (bare, control, floor). */
const kindOf = (impl) =>
  impl.startsWith('sluice') ? 'sluice' : ['bare', 'control', 'floor'].includes(impl) ? 'bare' : 'peer';

function coreSection(core, charts) {
  const spreadLabel =
    core.settings.subjects >= 1000 ? `${core.settings.subjects / 1000}k` : String(core.settings.subjects);
  const allowed = core.rows.filter((r) => r.path === 'allowed');
  const cell = (impl, c, api, subjects) =>
    allowed.find((r) => r.impl === impl && r.case === c && r.api === api && r.subjects === subjects)
      ?.opsPerSec;
  const sluiceCases = [...new Set(allowed.filter((r) => r.impl === 'sluice').map((r) => r.case))];
  const rows = sluiceCases.map((c) => [
    `Sluice ${c}`,
    spread(cell('sluice', c, 'consume', 'hot'), rate),
    spread(cell('sluice', c, 'decide', 'hot'), rate),
    spread(cell('sluice', c, 'consume', spreadLabel), rate),
    spread(cell('sluice', c, 'decide', spreadLabel), rate),
  ]);
  for (const r of allowed.filter((x) => x.impl !== 'sluice' && x.subjects === 'hot')) {
    rows.push([
      `${r.impl} (${r.api})`,
      spread(r.opsPerSec, rate),
      '',
      spread(cell(r.impl, r.case, r.api, spreadLabel), rate),
      '',
    ]);
  }
  const denied = core.rows
    .filter((r) => r.path === 'denied')
    .map((r) => [`${r.impl === 'sluice' ? 'Sluice' : r.impl} (${r.api})`, spread(r.opsPerSec, rate)]);
  const sw = (api, subjects) => cell('sluice', 'sliding-window', api, subjects);
  const peer = (impl, subjects) => allowed.find((r) => r.impl === impl && r.subjects === subjects)?.opsPerSec;
  const groups = ['hot', spreadLabel].map((subjects) => ({
    label: subjects === 'hot' ? 'one hot subject' : `${spreadLabel} subjects, round robin`,
    bars: [
      { label: 'Sluice sliding-window, consume()', kind: 'sluice', s: sw('consume', subjects) },
      { label: 'Sluice sliding-window, decide()', kind: 'sluice', s: sw('decide', subjects) },
      {
        label: 'Sluice two policies, consume()',
        kind: 'sluice',
        s: cell('sluice', 'two policies', 'consume', subjects),
      },
      { label: 'express-rate-limit MemoryStore', kind: 'peer', s: peer('express-rate-limit', subjects) },
      {
        label: 'rate-limiter-flexible RateLimiterMemory',
        kind: 'peer',
        s: peer('rate-limiter-flexible', subjects),
      },
      { label: '@fastify/rate-limit LocalStore', kind: 'peer', s: peer('@fastify/rate-limit', subjects) },
    ].map(({ label, kind, s }) => ({ label, kind, value: s?.median, min: s?.min, max: s?.max })),
  }));
  charts['bench-core.svg'] = barChart({
    title: 'In-process decisions per second (memory stores)',
    subtitle: `median of ${core.settings.rounds} interleaved rounds, whiskers min–max; dashed: the floors (8M/s hot, 3M/s over ${spreadLabel})`,
    groups,
    format: (v) => `${rate(v)}/s`,
    targets: [
      { value: TARGETS.core.spreadPerSec, label: '3M' },
      { value: TARGETS.core.hotPerSec, label: '8M' },
    ],
  });
  const profiles = (core.profiles ?? [])
    .map(
      (p) =>
        `\`${p.api}\`, ${p.subjects === 'hot' ? 'one hot subject' : '100,000 subjects'}: ${p.calls.replace(/^.*: /, '').replace(' (profiled)', ' under the profiler')}. Self time, top functions:\n\n${table(
          ['share', 'function (file:line of the built code)'],
          p.top.slice(0, 10).map((t) => [pct(t.share), code(t.fn)]),
        )}${
          p.lines?.length
            ? `\n\nHottest lines:\n\n${table(
                ['share', 'where', 'code'],
                p.lines.slice(0, 8).map((l) => [pct(l.share), code(l.where), code(l.code)]),
              )}`
            : ''
        }`,
    )
    .join('\n\n');
  return `## 1. Core: in-process decisions per second

\`pnpm bench:core\` · ${core.settings.rounds} interleaved rounds of ${core.settings.timeMs} ms per case (tinybench, ${core.settings.batch} calls per timed iteration) · run ${core.date}

Each case is timed in a fresh process of its own (one limiter, one store: no case's JIT state depends on which ran
before it), the peers the same way, in interleaved rounds. The profile below is of separate runs under the V8 profiler.
"hot" is one subject; "${spreadLabel}" is ${core.settings.subjects.toLocaleString('en')} subjects called round robin (all filled before timing).
Sluice's limit is never reached (the allowed path). \`consume\` is the promise API (\`await limiter.consume(s)\`);
\`decide\` is the synchronous fast path the adapters use (\`limiter.decide(s, 1, 'consume')\`, a plain Decision on MemoryStore).
The peers count a fixed window and return a counter, not a decision; @fastify/rate-limit's LocalStore (its
\`toad-cache\` LRU, sized to hold every subject instead of its default 5,000) is measured through \`incr\` with a no-op callback.
"promise floor" is what \`await\` of an already resolved promise costs in this loop, with nothing decided: no promise
API on this machine runs faster, so \`consume\` is \`decide\` plus about that. "decision floor" is the least \`consume\` can do
under the contract: find the subject's count in a Map and raise it, then give a fresh Decision (its \`policies\` array,
one policy state, a \`refund\`) through a resolved promise, with no algorithm, clock or check; Sluice's distance from it
is its own work, and the floor's distance from express-rate-limit (whose \`increment\` gives back the object it keeps)
is what a fresh answer costs. "fused floor" is \`consume\` fused into one function: that floor plus a subject check, a
clock reading shared by 32 calls, and Sluice's own sliding-window step run on the subject's state in a Map (no key
encoding, expiry, eviction or layering); no Sluice \`consume\` can be faster, and where it is not ahead of
express-rate-limit, no \`consume\` that keeps the contract is.
Policies: sliding-window and fixed-window 1e9 per minute; sliding-log 100 per 10 s (the hot subject is denied most calls);
buckets 1,000 per hour with a capacity of 1e8 (state kept between calls); concurrency 100 leases, each released at once
(one operation = take and give back); two policies = sliding-window per minute + token bucket, all-or-nothing.

![core chart](charts/bench-core.svg)

${table(['calls/s (median, min–max)', `hot, consume`, `hot, decide`, `${spreadLabel}, consume`, `${spreadLabel}, decide`], rows)}

Denied path (one hot subject over a limit of 100 per hour, every call refused):

${table(['calls/s', 'hot'], denied)}

### Where the time goes

${profiles || 'No profile in these results.'}
`;
}

function redisSection(redis, charts) {
  const label = (r) => (r.impl === 'sluice' ? `Sluice ${r.case}` : `${r.impl} ${r.case}`);
  const rows = redis.rows.map((r) => [
    label(r),
    spread(r.decisionsPerSec, rate),
    spread(r.p50Ms, ms),
    spread(r.p99Ms, ms),
    spread(r.redisCpuMsPer1000, ms),
    spread(r.bytesPerSubject, (x) => x.toFixed(0)),
    r.scriptsPerDecision.median.toFixed(2),
    r.commandsPerDecision.median.toFixed(2),
    String(r.failed),
    r.impl === 'sluice' ? String(r.degraded ?? 0) : '',
  ]);
  charts['bench-redis.svg'] = barChart({
    title: 'Redis: decisions per second at 64 in flight (one Node process)',
    subtitle: `ioredis auto-pipelining, local redis-server ${redis.redisVersion}; median of ${redis.settings.rounds} rounds, whiskers min–max`,
    groups: [
      {
        label: 'decisions per second',
        bars: redis.rows.map((r) => ({
          label: label(r),
          kind: kindOf(r.impl),
          value: r.decisionsPerSec.median,
          min: r.decisionsPerSec.min,
          max: r.decisionsPerSec.max,
        })),
      },
    ],
    format: (v) => `${rate(v)}/s`,
  });
  return `## 2. Redis

\`pnpm bench:redis\` · redis-server ${redis.redisVersion} started by the suite on a free loopback port · ${redis.settings.rounds} interleaved rounds · run ${redis.date}

One Node process, ${redis.settings.inFlight} calls in flight (ioredis \`enableAutoPipelining\`), ${redis.settings.subjects.toLocaleString('en')} subjects round robin for ${redis.settings.seconds} s per round,
after one call per subject (that first pass measures memory: \`INFO memory\` used_memory before and after, per subject).
Redis CPU is the \`INFO cpu\` used_cpu_sys + used_cpu_user delta over the timed pass, per 1,000 decisions. "Scripts" counts
EVALSHA/EVAL calls per decision (one script call is one round trip); "commands" counts every command Redis ran per decision,
those inside scripts included (\`INFO commandstats\`). Same policies as the core suite (concurrency: take and release, two round trips;
its keys are gone once released, hence no memory). Peers: limits never reached, 1-minute windows.
A subject's memory is mostly its key: ${keysText(redis)}.

![redis chart](charts/bench-redis.svg)

${table(['', 'decisions/s', 'p50 ms', 'p99 ms', 'Redis CPU ms / 1000', 'bytes / subject', 'scripts / decision', 'commands / decision', 'not admitted', 'decided without Redis'], rows)}
`;
}

/** One sample key of Sluice's sliding-window and of each peer, with its length. */
function keysText(redis) {
  const shown = redis.rows.filter((r) => r.sampleKey && (r.impl !== 'sluice' || r.case === 'sliding-window'));
  if (shown.length === 0) return 'no sample keys in these results';
  return shown
    .map(
      (r) =>
        `${r.impl === 'sluice' ? 'Sluice' : r.impl} \`${r.sampleKey}\` (${r.sampleKey.length} characters)`,
    )
    .join(', ');
}

/** The profiled share of Sluice's own code in a server's CPU, when the results hold it. */
function ownShareText(http) {
  if (http.ownShare === undefined) return '';
  const parts = Object.entries(http.ownShare).map(([framework, share]) => `${framework} ${pct(share)}`);
  return `
**Sluice's own cost.** The ratios above move by tens of percent from round to round on this machine, far more than a
limiter costs, so the suite also runs one Sluice memory server per framework under the V8 profiler (allowed path,
${http.settings.manySubjects.toLocaleString('en')} clients, 3 s after a 1-second warm-up): Sluice's own functions took ${parts.join(', ')} of the server's busy CPU time (self time;
the garbage collector and the kernel's work for the extra header bytes are not counted).`;
}

/** The in-process CPU per request of Sluice and of the floors, when the results hold it. */
function inProcessText(http) {
  if (http.inProcess === undefined) return '';
  const { runs, requests } = http.inProcessSettings;
  const us = (x) => (Number.isFinite(x) ? `${x.toFixed(2)} µs` : '–');
  const signed = (x) => `${x < 0 ? '−' : '+'}${Math.abs(x).toFixed(2)} µs`;
  const rows = http.inProcess.map(({ framework, subjects, results }) => {
    const of = (v) => results.find((r) => r.variant === v).usPerRequest;
    // A bare request over loopback: the bare app's time per request in the load runs (it is CPU-bound).
    const bare = http.rows.find(
      (r) =>
        r.framework === framework && r.kind === 'bare' && r.path === 'allowed' && r.subjects === subjects,
    );
    const loopbackUs = bare === undefined ? Number.NaN : 1e6 / bare.rps.median;
    const over = (x, floor) => `${signed(x - floor)} (${pct((x - floor) / loopbackUs)})`;
    return [
      framework,
      subjects === 1 ? 'one' : subjects.toLocaleString('en'),
      `${us(results[0].usPerRequest)} (${results[0].variant})`,
      us(of('headers')),
      us(of('sluice')),
      over(of('sluice'), of('headers')),
      us(of('denied-floor')),
      us(of('sluice-denied')),
      over(of('sluice-denied'), of('denied-floor')),
      us(loopbackUs),
    ];
  });
  return `
**Without the network.** \`node bench/http-inprocess.mjs\` serves the same kinds of app requests made in process, on Node's
own request and response objects over a socket that drops what is written: each variant in processes of its own, CPU per
request, median of ${runs} runs' fastest rounds of ${requests.toLocaleString('en')} requests. "headers" reads the client address and sets the two
RateLimit headers Sluice sends (what any limiter that answers alike pays on an allowed request); "denied floor" reads the
address and answers 429 with Sluice's headers and a body made once. Sluice's cost over its floor is also given as a share of
a bare request over loopback (the bare app's time per request in the runs above: most of it the kernel's).

${table(
  [
    'framework',
    'clients',
    'bare',
    'headers (floor)',
    'Sluice, allowed',
    'Sluice over floor',
    'denied floor',
    'Sluice, denied',
    'Sluice over floor',
    'bare over loopback',
  ],
  rows,
)}`;
}

function httpSection(http, charts) {
  const scenarios = [...new Set(http.rows.map((r) => `${r.path}|${r.subjects}`))];
  const scenarioLabel = (s) => {
    const [path, subjects] = s.split('|');
    return `${path}, ${subjects === '1' ? 'one subject' : `${Number(subjects).toLocaleString('en')} subjects`}`;
  };
  const sections = [];
  const groups = [];
  for (const framework of [...new Set(http.rows.map((r) => r.framework))]) {
    const kinds = [...new Set(http.rows.filter((r) => r.framework === framework).map((r) => r.kind))];
    const find = (kind, s) =>
      http.rows.find((x) => x.framework === framework && x.kind === kind && `${x.path}|${x.subjects}` === s);
    const grid = (cell) =>
      kinds.map((kind) => [
        http.rows.find((r) => r.kind === kind)?.label ?? kind,
        ...scenarios.map((s) => {
          const r = find(kind, s);
          return r === undefined ? '' : cell(r);
        }),
      ]);
    const ratios = grid((r) =>
      r.kind === 'bare'
        ? '100%'
        : `${spread(r.ratioToBare, pct)}${r.onPath < 0.99 ? ` ⚠ ${pct(r.onPath)} on path` : ''}`,
    );
    const rates = grid((r) => `${spread(r.rps, rate)}`);
    const p99 = grid((r) => spread(r.p99Ms, ms));
    const header = (what) => [what, ...scenarios.map(scenarioLabel)];
    sections.push(`### ${framework}

Share of the bare app's throughput (median over rounds, min–max):

${table(header('limiter'), ratios)}

Requests per second:

${table(header('limiter'), rates)}

Latency p99 (ms):

${table(header('limiter'), p99)}`);
    for (const s of scenarios) {
      const bars = http.rows
        .filter((r) => r.framework === framework && r.kind !== 'bare' && `${r.path}|${r.subjects}` === s)
        .map((r) => ({
          label: r.label,
          kind: kindOf(r.kind),
          value: r.ratioToBare.median,
          min: r.ratioToBare.min,
          max: r.ratioToBare.max,
        }));
      if (bars.length > 0) groups.push({ label: `${framework}, ${scenarioLabel(s)}`, bars });
    }
  }
  charts['bench-http.svg'] = barChart({
    title: 'HTTP: throughput as a share of the bare app (same round)',
    subtitle: `hello world, one server process, load by ${http.settings.tool.name}; median of ${http.settings.rounds} rounds, whiskers min–max`,
    groups,
    format: pct,
    targets: [
      { value: TARGETS.http.express.redis.allowed, label: '90% (Express, Redis)' },
      { value: TARGETS.http.express.memory.allowed, label: '97% (Express, memory)' },
    ],
  });
  return `## 3. HTTP

\`pnpm bench:http\` · load by ${http.settings.tool.name} ${http.settings.tool.version} (${http.settings.tool.connections} connections, one thread) in its own process · ${http.settings.rounds} rounds of ${http.settings.seconds} s per run, each limited run between two runs of its bare app, after a warm-up of each server on both paths · run ${http.date}

Each server is a hello-world app in its own process: bare, or with one limiter on two routes, \`/allowed\` (limit never
reached) and \`/denied\` (1 per hour: every measured request is answered 429). Trust proxy is on and the client address
comes from X-Forwarded-For: one address, or ${http.settings.manySubjects.toLocaleString('en')} addresses cycled by the load generator. Every limiter runs with its
defaults otherwise (Sluice sends its draft-10 RateLimit headers and problem+json 429 bodies; express-rate-limit its
default headers; rate-limiter-flexible sits behind the few-line middleware of its README, sending no headers).
The bare Fastify app registers one empty plugin: Fastify serves every request about 15% slower once any plugin is
registered, and a second costs nothing more (\`node bench/http-breakdown.mjs fastify\`), so against an app with no plugin at all
both limiters, plugins themselves, would be charged for Fastify's first plugin, which every real app has.
Ratios are to the bare app of the same framework and client addresses, measured right before and right after each
limited run (the mean of the two; this machine's speed drifts by tens of percent within seconds, so a ratio to a bare
run long before would measure the drift). A server idle for more than ${(http.settings.idleMs ?? 3000) / 1000} s first takes one unmeasured run of the same
load: after a pause this machine runs a Node server's first second about a fifth slower, which would have counted
against every limited server (each waits a whole round) and never against the bare app (it runs every other second). The bare app has no denied path: denied runs are compared with its allowed run. Redis-backed servers share one redis-server started by the suite.
The control is a second copy of the bare app, measured exactly as each limited server is (allowed path only): it
limits nothing, so how far its share lies from 100% is the method's own error in that run, for every row beside it.
The floor limits nothing either, but reads the client address (\`req.ip\` / \`request.ip\`, as the 'ip' subject does) and
gives every request Sluice's answer for its route, made once at start: on /allowed the two RateLimit header fields,
on /denied a 429 with those fields, Retry-After and the problem+json body (\`bench/servers/floors.mjs\`). No limiter
that keys on the address and answers as Sluice does can cost less, so the floor's share is the most such a limiter can
keep in that run, and the distance from the floor to Sluice is what Sluice's own work costs.
A ⚠ gives the share of answers that were on the path measured (200 on /allowed, 429 on /denied) in the worst round,
when under 99%. @fastify/rate-limit keeps 5,000 keys in memory by default (its \`cache\` option, left at its default
here): with ${http.settings.manySubjects.toLocaleString('en')} clients it forgets each one before it comes back, so on /denied it denies nothing.
${ownShareText(http)}
${inProcessText(http)}

![http chart](charts/bench-http.svg)

${sections.join('\n\n')}
`;
}

function atomicitySection(atomicity, charts) {
  const single = atomicity.rows.filter((r) => r.variant === 'one policy');
  const two = atomicity.rows.filter((r) => r.variant === 'two policies');
  charts['bench-atomicity.svg'] = barChart({
    title: 'Two policies under 2,000 concurrent calls: wide quota burned by denied calls',
    subtitle: `limit ${atomicity.settings.limit} (strict) and ${atomicity.settings.wideLimit.toLocaleString('en')} (wide), ${atomicity.settings.processes} processes × ${atomicity.settings.callsPerProcess} calls on one subject`,
    groups: [
      {
        label: 'calls charged to the wide policy but denied (0 is correct)',
        bars: two.map((r) => ({
          label: r.case === 'sluice' ? 'Sluice' : r.case,
          kind: kindOf(r.case),
          value: r.burned,
        })),
      },
    ],
    format: (v) => String(v),
  });
  return `## 4. Atomicity

\`node bench/run.mjs atomicity\` · ${atomicity.settings.processes} processes × ${atomicity.settings.callsPerProcess} concurrent calls on one subject, limit ${atomicity.settings.limit} in a 1-hour window, one redis-server · run ${atomicity.date}

Sluice runs with \`storeTimeout: '10s'\` here so that a slow answer under this burst is waited for rather than decided
in process by the \`onStoreError: 'local'\` fallback (which would measure the fallback, not the store); "decided without
Redis" counts any decision that still was. The peers' counts follow each library's rule (rate-limit-redis: totalHits ≤ limit;
@fastify/rate-limit: current ≤ max; rate-limiter-flexible: consume resolved).

${table(
  ['one policy', `admitted of ${single[0]?.calls ?? ''}`, 'decided without Redis'],
  single.map((r) => [r.case.replace('sluice:', 'Sluice '), String(r.admitted), String(r.degraded ?? 0)]),
)}

Two policies (strict ${atomicity.settings.limit}, wide ${atomicity.settings.wideLimit.toLocaleString('en')}): the peers have no multi-policy call, so two limiters run in series the way
they are usually mounted (rate-limiter-flexible: its \`RateLimiterUnion\`).

![atomicity chart](charts/bench-atomicity.svg)

${table(
  ['two policies', 'how', 'admitted', 'charged to the wide policy', 'burned by denied calls'],
  two.map((r) => [
    r.case === 'sluice' ? 'Sluice' : r.case,
    r.order,
    String(r.admitted),
    String(r.wideCharged),
    String(r.burned),
  ]),
)}
`;
}

function memorySection(memory, charts) {
  const labels = {
    bare: 'bare app (no limiter)',
    'sluice-default': 'Sluice, MemoryStore (maxKeys default: 1,000,000)',
    'sluice-100k': 'Sluice, MemoryStore maxKeys 100,000',
    'erl-memory': 'express-rate-limit, MemoryStore',
    'rlf-memory': 'rate-limiter-flexible, RateLimiterMemory',
  };
  const bare = memory.rows.find((r) => r.config === 'bare');
  const rows = memory.rows.map((r) => [
    labels[r.config] ?? r.config,
    mib(r.after.rss),
    bare && r !== bare ? mib(r.after.rss - bare.after.rss) : '',
    mib(r.after.heapUsed),
    bare && r !== bare
      ? `${((r.after.heapUsed - bare.after.heapUsed) / memory.settings.subjects).toFixed(0)} B`
      : '',
  ]);
  charts['bench-memory.svg'] = barChart({
    title: `Resident memory of an Express app after ${memory.settings.subjects.toLocaleString('en')} distinct subjects`,
    subtitle: 'RSS after a full GC; one fresh process per configuration',
    groups: [
      {
        label: 'resident set size (MiB)',
        bars: memory.rows.map((r) => ({
          label: labels[r.config] ?? r.config,
          kind: r.config === 'bare' ? 'bare' : kindOf(r.config),
          value: r.after.rss / 2 ** 20,
        })),
      },
    ],
    format: (v) => `${v.toFixed(0)} MiB`,
  });
  return `## 5. Memory

\`node bench/run.mjs memory\` · ${memory.settings.subjects.toLocaleString('en')} distinct client addresses, one request each, limit never reached · run ${memory.date}

Each configuration is a fresh process holding an Express app (trust proxy on) with the limiter mounted. The requests go
to the app's middleware in process with Express's own request object (so \`req.ip\` and trust proxy are Express's) and a
stub response: a million HTTP requests would take minutes per configuration, and what is measured is what the limiter holds.
Measured after three forced GCs. "per subject" is the heap growth over the bare app divided by the subjects (for
maxKeys 100,000 it is spread over a million subjects of which 100,000 are held).

![memory chart](charts/bench-memory.svg)

${table(['', 'resident (RSS)', 'over bare', 'heap used', 'heap per subject'], rows)}
`;
}

function environmentSection(env, results) {
  if (env === undefined) return '';
  const packages = Object.entries(env.packages)
    .map(([name, v]) => `${name} ${v}`)
    .join(', ');
  const dates = SUITES.filter((s) => results[s]).map(
    (s) =>
      `${s} ${results[s].date}${results[s].durationMs ? ` (${(results[s].durationMs / 1000).toFixed(0)} s)` : ''}`,
  );
  return `- Machine: ${env.cpu}, ${env.cores} cores, ${env.memoryGiB} GiB, ${env.os}; load average at the start ${env.loadAverage.join(' / ')}
- Node ${env.node}, Redis ${env.redis}; commit ${env.commit}${env.dirty ? ' (with uncommitted changes)' : ''}
- Packages: ${packages}
- Command: \`${env.command}\`, started ${env.date}${env.totalSeconds ? `, ${env.totalSeconds.toFixed(0)} s in all` : ''}
- Suites: ${dates.join('; ')}`;
}

function targetsSection(results) {
  const checks = checkTargets(results);
  if (checks.length === 0) return 'No suite with targets has results yet.';
  const met = checks.filter((c) => c.met).length;
  return `${met} of ${checks.length} checks met.\n\n${table(
    ['', 'target', 'measured', 'met', 'margin'],
    checks.map((c) => [c.what, c.target, c.measured, c.met ? 'yes' : '**no**', c.margin]),
  )}`;
}

/** Writes the report and the charts; returns the report's path. */
export function writeReport(dir = resultsDir(false)) {
  const results = readResults(dir);
  const charts = {};
  const sections = [];
  if (results.core) sections.push(coreSection(results.core, charts));
  if (results.redis) sections.push(redisSection(results.redis, charts));
  if (results.http) sections.push(httpSection(results.http, charts));
  if (results.atomicity) sections.push(atomicitySection(results.atomicity, charts));
  if (results.memory) sections.push(memorySection(results.memory, charts));
  const missing = SUITES.filter((s) => !results[s]);
  const markdown = `# Benchmarks

Sluice beside the libraries it replaces, side by side in each suite. \`pnpm bench\` runs every suite and writes this page
and its charts from \`bench/results/*.json\` (\`pnpm bench:core\`, \`bench:redis\`, \`bench:http\` rerun one suite and keep the
others' last results: each suite's date is listed; \`node bench/report.mjs\` rebuilds the page without measuring). ${
    missing.length > 0 ? `Not in these results: ${missing.join(', ')}.` : ''
  }

${environmentSection(results.environment, results)}

**Reading the numbers.** Each figure is the median over interleaved rounds with its min–max in parentheses; a ~ marks
a spread above ${pct(NOISY)} of the median. Only differences larger than both figures' spreads mean anything. On this
2-core machine the in-process (core) and memory numbers are the stable ones; Redis and HTTP numbers share two cores
between the app, Redis and the load generator and move by 10–20% between runs, so compare them as ratios within one run
(the HTTP ratios are taken against the bare app of the same round for that reason), not across runs or machines.

## Targets

${targetsSection(results)}

${sections.join('\n')}`;
  mkdirSync(join(ROOT_DIR, 'docs/charts'), { recursive: true });
  for (const [name, svg] of Object.entries(charts)) writeFileSync(join(ROOT_DIR, 'docs/charts', name), svg);
  const file = join(ROOT_DIR, 'docs/benchmarks.md');
  writeFileSync(file, markdown);
  // The repository's formatter owns the layout of markdown tables; the page must pass `pnpm lint`.
  spawnSync(join(ROOT_DIR, 'node_modules/.bin/biome'), ['format', '--write', file], { stdio: 'ignore' });
  return file;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(`wrote ${writeReport(process.argv[2])}`);
}

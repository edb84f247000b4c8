/**
 * The targets (issue 23), the one place they are set and checked against a run's results:
 *   1. against the peers: in every cell, Sluice's median against the best peer's, with both ranges;
 *      met when Sluice is ahead or the ranges overlap, behind when its whole range is worse;
 *   2. Sluice's own cost over the floor, in process (µs of CPU per request): reported, not judged
 *      (issue 32 retired it: the floor's own spread between runs hid the verdict in half the cells);
 *   3. Redis CPU per 1,000 sliding-window decisions, one round trip, bytes per subject;
 *   4. atomicity: exactly the limit admitted, nothing burned, every algorithm and two policies;
 *   5. PostgreSQL (issue 30): Sluice over RateLimiterPostgres at 64 in flight, no deadlock and no
 *      error with keys crossed between processes, expired rows swept by consume alone;
 *   6. edge (issue 31): a fetch handler's bundle beside @upstash/ratelimit's for the same job, no Node
 *      built-in in it, one HTTP request to Redis per two-policy decision;
 *   7. Node cluster (issue 32, its target 2): ClusterStore's decisions/s over RateLimiterCluster's at 4
 *      workers, and the primary's CPU per decision under its;
 *   8. node-redis (issue 32, target 1): Sluice's sliding window on node-redis against rate-limit-redis on
 *      node-redis, and against Sluice on ioredis, in the same run;
 *   9. sliding log at large limits (issue 32, target 4): a full log of limit 10,000 costs at most 2x one
 *      of limit 10 per call, in memory (µs per consume) and on Redis (the script's µs per call); the
 *      limit 1,000 and Redis's bytes per subject are shown beside;
 *  10. many subjects (issue 32, target 3): at 100,000 and 1,000,000 subjects on ioredis, Sluice's
 *      fixed window at most 0.8x rate-limit-redis's Redis CPU per decision, its sliding window at most
 *      1.0x, each at least 1.5x its decisions/s, and at most 145 B per subject, in the same run;
 *  11. Fastify, memory, allowed (issue 32, target 5): target 1's cells of it, ahead of or level with
 *      @fastify/rate-limit.
 */
import { summarize } from './common.mjs';

export const TARGETS = {
  redis: { cpuMsPer1000: 2.4, scriptsPerDecision: 1, bytesPerSubject: 145 },
  atomicity: { admitted: 1000, burned: 0 },
  // Ratios of medians; the table shrinks below `shrinkShare` of the expired subjects within `shrinkWithinS`.
  postgres: {
    onePolicyRatio: 2,
    twoPoliciesRatio: 1.5,
    deadlocks: 0,
    errors: 0,
    shrinkShare: 0.25,
    shrinkWithinS: 5,
  },
  edge: { bundleRatio: 1.5, nodeImports: 0, requestsPerDecision: 1 },
  // Ratios of medians, Sluice's over RateLimiterCluster's in the same run.
  cluster: { decisionsRatio: 2, primaryCpuRatio: 0.5 },
  // Ratios of medians of decisions/s: over rate-limit-redis on node-redis, and of Sluice on ioredis.
  nodeRedis: { overRateLimitRedis: 1.5, ofIoredis: 0.85 },
  // Ratio of medians of the cost per call of a full sliding log, the largest limit's over the smallest's.
  fullLog: { largeOverSmall: 2 },
  // Ratios of medians over rate-limit-redis's (ioredis) at each size, in the same run; bytes per subject.
  manySubjects: { fixedCpuRatio: 0.8, slidingCpuRatio: 1.0, decisionsRatio: 1.5, bytesPerSubject: 145 },
};

const SI = [
  [1e6, 2, 'M'],
  [1e3, 1, 'k'],
  [1, 0, ''],
];
export const rate = (x) => {
  if (!Number.isFinite(x)) return '–';
  const [unit, digits, suffix] = SI.find(([u]) => x >= u) ?? SI[2];
  return `${(x / unit).toFixed(digits)}${suffix}`;
};
export const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : '–');
export const fixed = (digits) => (x) => (Number.isFinite(x) ? x.toFixed(digits) : '–');
const signed = (x) => `${x < 0 ? '−' : '+'}${Math.abs(x).toFixed(2)}`;
export const clients = (n) => (n === 1 ? 'one client' : `${n.toLocaleString('en')} clients`);

/** "median (min–max)" when the rounds differ. */
export function range(s, format) {
  if (!Number.isFinite(s?.median)) return '–';
  return s.max > s.min ? `${format(s.median)} (${format(s.min)}–${format(s.max)})` : format(s.median);
}

export function table(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Target 1: one entry per cell, Sluice against the best peer measured in it. */
export function peerCells({ core, redis, cluster, http }) {
  const cells = [];
  const add = (
    suite,
    cell,
    sluice,
    peers,
    format,
    { lowerIsBetter = false, note = '', judged = true } = {},
  ) => {
    const measured = peers.filter((p) => Number.isFinite(p.s?.median));
    if (!Number.isFinite(sluice?.median) || measured.length === 0) return;
    const better = (a, b) => (lowerIsBetter ? a < b : a > b);
    const best = measured.reduce((a, b) => (better(b.s.median, a.s.median) ? b : a));
    const overlap = sluice.min <= best.s.max && best.s.min <= sluice.max;
    const verdict = overlap ? 'overlap' : better(sluice.median, best.s.median) ? 'ahead' : 'behind';
    const ratio = sluice.median / best.s.median;
    cells.push({
      suite,
      cell,
      sluice,
      peer: best,
      ratio,
      verdict,
      met: verdict !== 'behind',
      judged,
      format,
      note,
    });
  };
  if (core) {
    const find = (path, impl, api, subjects) =>
      core.rows.find(
        (r) =>
          `${r.path}|${r.impl}|${r.api}|${r.subjects}` === `${path}|${impl}|${api}|${subjects}` &&
          (impl !== 'sluice' || r.case === 'sliding-window'),
      )?.opsPerSec;
    const peer = (path, impl, api, subjects) => ({ name: impl, s: find(path, impl, api, subjects) });
    for (const subjects of new Set(core.rows.map((r) => r.subjects))) {
      const fused = find('allowed', 'fused floor', 'the step and a fresh Decision', subjects);
      const peers = [
        peer('allowed', 'express-rate-limit', 'MemoryStore.increment', subjects),
        peer('allowed', 'rate-limiter-flexible', 'RateLimiterMemory.consume', subjects),
      ];
      for (const api of ['consume', 'decide']) {
        const cell = `\`${api}\`, allowed, ${subjects === 'hot' ? 'one hot subject' : `${subjects} subjects`}`;
        const note = api === 'consume' && fused ? `fused floor ${rate(fused.median)}/s` : '';
        add('core', cell, find('allowed', 'sluice', api, subjects), peers, rate, {
          note,
          judged: api !== 'consume',
        });
      }
    }
    for (const api of ['consume', 'decide']) {
      const peers = [peer('denied', 'rate-limiter-flexible', 'RateLimiterMemory.consume', 'hot')];
      add('core', `\`${api}\`, denied, one hot subject`, find('denied', 'sluice', api, 'hot'), peers, rate, {
        judged: api !== 'consume',
      });
    }
  }
  for (const client of new Set(redis?.rows.map((r) => r.client))) {
    const rows = redis.rows.filter((r) => r.client === client);
    const sluice = rows.find((r) => r.impl === 'sluice' && r.case === 'sliding-window')?.decisionsPerSec;
    const peers = rows.filter((r) => r.impl !== 'sluice' && r.impl !== 'floor');
    const named = peers.map((r) => ({ name: `${r.impl} ${r.case}`, s: r.decisionsPerSec }));
    add('redis', `sliding-window decisions/s, ${client}`, sluice, named, rate);
  }
  if (cluster) {
    const [sluice, flexible] = cluster.rows;
    const peer = (metric) => [{ name: `${flexible.impl} ${flexible.case}`, s: flexible[metric] }];
    const workers = `${cluster.settings.workers} workers`;
    add('cluster', `decisions/s, ${workers}`, sluice.decisionsPerSec, peer('decisionsPerSec'), rate);
    const cpu = "primary's CPU µs per decision (lower is better)";
    add('cluster', cpu, sluice.primaryUsPerDecision, peer('primaryUsPerDecision'), fixed(1), {
      lowerIsBetter: true,
    });
  }
  for (const row of http?.rows.filter((r) => r.kind.startsWith('sluice-')) ?? []) {
    const store = row.kind.slice(7);
    // A peer that answered off the path measured (a 200 where a 429 was due) is not doing the work.
    const peers = http.rows.filter(
      (r) =>
        `${r.framework}|${r.path}|${r.subjects}` === `${row.framework}|${row.path}|${row.subjects}` &&
        !r.kind.startsWith('sluice') &&
        r.kind.endsWith(`-${store}`) &&
        r.onPath >= 0.99,
    );
    const cell = `${row.framework}, ${store}, ${row.path}, ${clients(row.subjects)}: share of bare`;
    add(
      'http',
      cell,
      row.ratioToBare,
      peers.map((r) => ({ name: r.kind, s: r.ratioToBare })),
      pct,
    );
  }
  return cells;
}

/**
 * Section 2, reported and not judged: Sluice over its floor in process, run by run, per framework,
 * client count and path, beside the floor's own spread between runs (the method's error).
 */
export function overFloorRows(http) {
  const rows = [];
  const byKey = new Map((http?.inProcess ?? []).map((r) => [`${r.framework}|${r.subjects}|${r.variant}`, r]));
  for (const { framework, subjects, variant } of byKey.values()) {
    if (!variant.startsWith('floor')) continue;
    const path = variant === 'floor' ? 'allowed' : 'denied';
    const floor = byKey.get(`${framework}|${subjects}|${variant}`).runs;
    const sluice = byKey.get(`${framework}|${subjects}|${variant.replace('floor', 'sluice-memory')}`)?.runs;
    if (sluice === undefined) continue;
    const over = summarize(sluice.map((x, i) => x - floor[i]));
    const [floorUs, sluiceUs] = [floor, sluice].map((runs) => summarize(runs).median);
    const spread = Math.max(...floor) - Math.min(...floor);
    rows.push({ framework, subjects, path, over, floorUs, spread, sluiceUs });
  }
  return rows;
}

/** Target 3: the Redis suite's sliding-window row on ioredis, and the two-policy row's round trips. */
export function redisRows(redis) {
  const sluice = (label) =>
    redis?.rows.find((r) => r.impl === 'sluice' && r.client === 'ioredis' && r.case === label);
  const sw = sluice('sliding-window');
  if (sw === undefined) return [];
  const t = TARGETS.redis;
  const cpu = (r) => r.redisCpuMsPer1000.median;
  const floor = redis.rows.find((r) => r.impl === 'floor');
  const peers = redis.rows.filter((r) => r.impl !== 'sluice' && r.impl !== 'floor' && r.client === 'ioredis');
  const leanest = peers.sort((a, b) => cpu(a) - cpu(b))[0];
  const context = [
    floor && `batched floor ${cpu(floor).toFixed(2)}`,
    leanest && `leanest peer ${cpu(leanest).toFixed(2)} (${leanest.impl})`,
  ].filter(Boolean);
  const rows = [
    {
      what: `Redis CPU per 1,000 sliding-window decisions (ms); ${context.join(', ')}`,
      target: `≤ ${t.cpuMsPer1000}`,
      measured: range(sw.redisCpuMsPer1000, fixed(2)),
      met: cpu(sw) <= t.cpuMsPer1000,
    },
    {
      what: `Redis memory per subject (B), key \`${sw.sampleKey ?? ''}\``,
      target: `≤ ${t.bytesPerSubject}`,
      measured: fixed(0)(sw.bytesPerSubject),
      met: sw.bytesPerSubject <= t.bytesPerSubject,
    },
  ];
  for (const r of [sw, sluice('two policies')].filter(Boolean)) {
    rows.push({
      what: `${r.case}: round trips (scripts) per decision; calls of one turn share one`,
      target: `≤ ${t.scriptsPerDecision}`,
      measured: r.scriptsPerDecision.toFixed(2),
      met: r.scriptsPerDecision <= t.scriptsPerDecision + 1e-4,
    });
  }
  return rows;
}

/** Target 4: every Sluice row of the atomicity suite. */
export function atomicityRows(atomicity) {
  const { admitted, burned } = TARGETS.atomicity;
  return (atomicity?.rows ?? [])
    .filter((r) => r.case.startsWith('sluice'))
    .map((r) =>
      r.variant === 'one policy'
        ? {
            what: `${r.case.slice(7)}: admitted of ${r.calls}`,
            target: `${admitted}`,
            measured: `${r.admitted}`,
            met: r.admitted === admitted && !r.degraded,
          }
        : {
            what: 'two policies: admitted, wide quota burned by denied calls',
            target: `${admitted}, ${burned}`,
            measured: `${r.admitted}, ${r.burned}`,
            met: r.admitted === admitted && r.burned === burned && !r.degraded,
          },
    );
}

/** Target 5: the PostgreSQL suite's throughput over the peer's, its crossing run and its sweep. */
export function postgresRows(postgres) {
  if (postgres === undefined) return [];
  const t = TARGETS.postgres;
  const out = [];
  const find = (impl, label) =>
    postgres.rows.find((r) => r.impl === impl && r.case === label && r.subjects === 'many');
  const pairs = [
    [
      'one policy: sliding-window over RateLimiterPostgres',
      'sliding-window',
      'RateLimiterPostgres',
      t.onePolicyRatio,
    ],
    [
      'two policies over two RateLimiterPostgres (RateLimiterUnion)',
      'two policies',
      'two limiters (RateLimiterUnion)',
      t.twoPoliciesRatio,
    ],
  ];
  for (const [what, mine, theirs, target] of pairs) {
    const [sluice, peer] = [find('sluice', mine), find('rate-limiter-flexible', theirs)];
    if (sluice === undefined || peer === undefined) continue;
    const ratio = sluice.decisionsPerSec.median / peer.decisionsPerSec.median;
    const both = `Sluice ${range(sluice.decisionsPerSec, rate)}/s, peer ${range(peer.decisionsPerSec, rate)}/s`;
    out.push({
      what: `${what}, decisions/s at ${postgres.settings.inFlight} in flight`,
      target: `≥ ${target}×`,
      measured: `${ratio.toFixed(2)}× (${both})`,
      met: ratio >= target,
    });
  }
  const { cross, churn } = postgres;
  if (cross) {
    out.push({
      what: `${cross.workers} processes crossing keys for ${cross.seconds} s (${cross.calls.toLocaleString('en')} calls): deadlocks, errors`,
      target: `${t.deadlocks}, ${t.errors}`,
      measured: `${cross.deadlocks}, ${cross.errors} (a deadlock made on purpose counted ${cross.counterCheck})`,
      // A counter that did not count the deadlock made on purpose cannot tell 0 from many.
      met:
        cross.deadlocks === t.deadlocks &&
        cross.errors === t.errors &&
        cross.degraded === 0 &&
        cross.counterCheck === 1,
    });
  }
  if (churn) {
    const below = Math.round(churn.subjects * t.shrinkShare);
    const after = churn.belowTargetAfterS;
    const rows = (sample) => `${sample.rows.toLocaleString('en')} rows`;
    out.push({
      what: `${churn.subjects.toLocaleString('en')} subjects of a 1 s window, then traffic calling consume only: table rows`,
      target: `< ${below.toLocaleString('en')} within ${t.shrinkWithinS} s`,
      measured: `${
        after == null ? `never below in ${churn.trafficSeconds} s` : `below after ${after} s`
      } (${rows(churn.samples[0])} → ${rows(churn.samples.at(-1))}; n_dead_tup ${churn.samples.at(-1).dead.toLocaleString('en')} at the end)`,
      met: after != null && after <= t.shrinkWithinS && churn.errors === 0,
    });
  }
  return out;
}

const yes = (met) => (met ? 'met' : '**missed**');
const count = (rows) => `${rows.filter((r) => r.met).length} of ${rows.length} met`;

/** The four targets as markdown: a heading each with where Sluice stands, then its table. */
export const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;

/** The least of the edge suite's floor bundles over the peer's: how far the bundle target is from reach. */
function floorNote(floor, theirs) {
  if (floor === undefined) return '';
  const least = floor.rows.reduce((a, b) => (b.gzipBytes < a.gzipBytes ? b : a));
  return `; floor ${(least.gzipBytes / theirs.gzipBytes).toFixed(2)}× (${kB(least.gzipBytes)}: ${least.job.split(':')[0]}, ${least.leftOut ? 'the unused Lua and the migration hints left out' : 'whole'})`;
}

/** Target 6: the edge suite's bundle (gzip) over @upstash/ratelimit's, its Node imports, its requests a decision. */
export function edgeRows(edge) {
  if (edge === undefined) return [];
  const t = TARGETS.edge;
  const out = [];
  const [mine, theirs] = ['sluice', '@upstash/ratelimit'].map((impl) =>
    edge.bundles.find((b) => b.impl === impl),
  );
  if (mine !== undefined && theirs !== undefined) {
    const ratio = mine.gzipBytes / theirs.gzipBytes;
    out.push(
      {
        what: "a fetch handler with two limits, bundled (esbuild, minified, browser platform) and gzipped, over @upstash/ratelimit's",
        target: `≤ ${t.bundleRatio}×`,
        measured: `${ratio.toFixed(2)}× (Sluice ${kB(mine.gzipBytes)}, peer ${kB(theirs.gzipBytes)})${floorNote(edge.floor, theirs)}`,
        met: ratio <= t.bundleRatio,
      },
      {
        what: 'Node built-ins the bundle imports',
        target: `${t.nodeImports}`,
        measured: mine.nodeImports.length === 0 ? '0' : mine.nodeImports.join(', '),
        met: mine.nodeImports.length === t.nodeImports,
      },
    );
  }
  const allowed = edge.rows.find((r) => r.impl === 'sluice' && r.path === 'allowed');
  if (allowed !== undefined) {
    out.push({
      what: 'HTTP requests to Redis per decision of two policies (allowed)',
      target: `${t.requestsPerDecision}`,
      measured: range(allowed.requestsPerDecision, fixed(2)),
      met: allowed.requestsPerDecision.max <= t.requestsPerDecision,
    });
  }
  return out;
}

/** Target 7: the cluster suite's decisions/s and primary CPU per decision, each over the peer's. */
export function clusterRows(cluster) {
  const [sluice, peer] = ['sluice', 'rate-limiter-flexible'].map((impl) =>
    cluster?.rows.find((r) => r.impl === impl),
  );
  if (sluice === undefined || peer === undefined) return [];
  const t = TARGETS.cluster;
  const { workers, inFlight } = cluster.settings;
  const ratioOf = (metric, format, unit, what, target, met) => {
    const ratio = sluice[metric].median / peer[metric].median;
    const both = `Sluice ${range(sluice[metric], format)}${unit}, peer ${range(peer[metric], format)}${unit}`;
    return { what, target, measured: `${ratio.toFixed(2)}× (${both})`, met: met(ratio) };
  };
  return [
    ratioOf(
      'decisionsPerSec',
      rate,
      '/s',
      `decisions/s over RateLimiterCluster's, ${workers} workers x ${inFlight} in flight`,
      `≥ ${t.decisionsRatio}×`,
      (ratio) => ratio >= t.decisionsRatio,
    ),
    ratioOf(
      'primaryUsPerDecision',
      fixed(1),
      ' µs',
      "the primary's CPU per decision over RateLimiterCluster's",
      `≤ ${t.primaryCpuRatio}×`,
      (ratio) => ratio <= t.primaryCpuRatio,
    ),
  ].map((row) => ({ ...row, met: row.met && sluice.failed === 0 && sluice.degraded === 0 }));
}

/** Target 8: Sluice's sliding window on node-redis over rate-limit-redis there, and beside itself on ioredis. */
export function nodeRedisRows(redis) {
  const t = TARGETS.nodeRedis;
  const find = (impl, client, label) =>
    redis?.rows.find(
      (r) => r.impl === impl && r.client === client && (label === undefined || r.case === label),
    )?.decisionsPerSec;
  const mine = find('sluice', 'node-redis', 'sliding-window');
  if (!Number.isFinite(mine?.median)) return [];
  const pairs = [
    ['rate-limit-redis on node-redis', find('rate-limit-redis', 'node-redis'), t.overRateLimitRedis, 'peer'],
    ['Sluice sliding-window on ioredis', find('sluice', 'ioredis', 'sliding-window'), t.ofIoredis, 'ioredis'],
  ];
  return pairs
    .filter(([, theirs]) => Number.isFinite(theirs?.median))
    .map(([what, theirs, target, name]) => {
      const ratio = mine.median / theirs.median;
      return {
        what: `Sluice sliding-window on node-redis, decisions/s, over ${what}`,
        target: `≥ ${target}×`,
        measured: `${ratio.toFixed(2)}× (Sluice ${range(mine, rate)}/s, ${name} ${range(theirs, rate)}/s)`,
        met: ratio >= target,
      };
    });
}

/** Target 9: a full sliding log's cost per call at the largest limit over the smallest, in memory and on Redis. */
export function fullLogRows({ core, redis }) {
  const t = TARGETS.fullLog;
  const out = [];
  const judge = (where, byLimit, format, unit, extra = () => '', clean = true) => {
    const limits = [...byLimit.keys()].sort((a, b) => a - b);
    if (limits.length < 2) return;
    const [small, large] = [byLimit.get(limits[0]), byLimit.get(limits.at(-1))];
    if (!Number.isFinite(small?.median) || !Number.isFinite(large?.median)) return;
    const ratio = large.median / small.median;
    const each = limits.map(
      (l) => `${l.toLocaleString('en')}: ${range(byLimit.get(l), format)}${unit}${extra(l)}`,
    );
    out.push({
      what: `${where}: limit ${limits.at(-1).toLocaleString('en')} over limit ${limits[0].toLocaleString('en')}, per call`,
      target: `≤ ${t.largeOverSmall}×`,
      measured: `${ratio.toFixed(2)}× (${each.join('; ')})`,
      // A call that found the log not full, or was decided without the store, was not the full log's work.
      met: ratio <= t.largeOverSmall && clean,
    });
  };
  const memory = new Map();
  for (const r of core?.rows ?? []) {
    if (r.path !== 'full log') continue;
    // µs per consume from calls per second: the range's ends swap.
    const us = (x) => 1e6 / x;
    const o = r.opsPerSec;
    memory.set(Number(/limit (\d+)/.exec(r.case)[1]), {
      median: us(o.median),
      min: us(o.max),
      max: us(o.min),
    });
  }
  judge('in memory, µs per `consume` of a full sliding log', memory, fixed(2), ' µs');
  const rows = redis?.fullLog ?? [];
  const bytes = new Map(rows.map((r) => [r.limit, r.bytesPerSubject]));
  const allowed = rows.every((r) => r.notFull === 0 && r.degraded === 0);
  judge(
    "on Redis (ioredis), the script's µs per call of a full sliding log (INFO commandstats)",
    new Map(rows.map((r) => [r.limit, r.scriptUsPerCall])),
    fixed(1),
    ' µs',
    (l) => `, ${bytes.get(l)} B/subject`,
    allowed,
  );
  return out;
}

/**
 * Target 10: at each size of the Redis suite's many-subject rows, Sluice's fixed and sliding windows
 * over rate-limit-redis in Redis CPU per decision and in decisions/s, and Sluice's bytes per subject;
 * the floor's CPU beside.
 */
export function manySubjectsRows(redis) {
  const t = TARGETS.manySubjects;
  const all = redis?.manySubjects ?? [];
  const out = [];
  for (const size of new Set(all.map((r) => r.subjects))) {
    const rows = all.filter((r) => r.subjects === size);
    const find = (impl, label) =>
      rows.find((r) => r.impl === impl && (label === undefined || r.case === label));
    const peer = find('rate-limit-redis');
    const floor = find('floor');
    const at = `${size.toLocaleString('en')} subjects`;
    if (peer === undefined) continue;
    // A Sluice row with a call failed or decided without Redis measured something else.
    const clean = (r) => r.failed === 0 && r.degraded === 0;
    const ratio = (mine, metric, format, unit, what, target, met) => {
      const x = mine[metric].median / peer[metric].median;
      const floorNote =
        metric === 'redisCpuMsPer1000' && floor ? `, floor ${range(floor[metric], format)}${unit}` : '';
      return {
        what: `${at}: Sluice ${mine.case} ${what} over rate-limit-redis's`,
        target,
        measured: `${x.toFixed(2)}× (Sluice ${range(mine[metric], format)}${unit}, peer ${range(peer[metric], format)}${unit}${floorNote})`,
        met: met(x) && clean(mine),
      };
    };
    const sluices = [
      [find('sluice', 'fixed-window'), t.fixedCpuRatio],
      [find('sluice', 'sliding-window'), t.slidingCpuRatio],
    ].filter(([r]) => r !== undefined);
    for (const [mine, cpuRatio] of sluices) {
      out.push(
        ratio(
          mine,
          'redisCpuMsPer1000',
          fixed(2),
          ' ms',
          'Redis CPU per 1,000 decisions',
          `≤ ${cpuRatio}×`,
          (x) => x <= cpuRatio,
        ),
        ratio(
          mine,
          'decisionsPerSec',
          rate,
          '/s',
          'decisions/s',
          `≥ ${t.decisionsRatio}×`,
          (x) => x >= t.decisionsRatio,
        ),
      );
    }
    if (sluices.length > 0) {
      const bytes = sluices.map(([r]) => `${r.case} ${fixed(0)(r.bytesPerSubject)}`);
      out.push({
        what: `${at}: Redis memory per subject (B), key \`${sluices[0][0].sampleKey ?? ''}\`; rate-limit-redis ${fixed(0)(peer.bytesPerSubject)}`,
        target: `≤ ${t.bytesPerSubject}`,
        measured: bytes.join(', '),
        met: sluices.every(([r]) => r.bytesPerSubject <= t.bytesPerSubject),
      });
    }
  }
  return out;
}

/**
 * Target 11 (issue 32, target 5): the cells of target 1 where Sluice on Fastify's memory store admits,
 * against @fastify/rate-limit's, drawn out of that table so that the issue's verdict stands on its own.
 */
export function fastifyMemoryRows(cells) {
  return cells
    .filter((c) => c.suite === 'http' && c.cell.startsWith('fastify, memory, allowed'))
    .map((c) => ({
      what: `${c.cell}, over ${c.peer.name}`,
      target: 'ahead or level (ranges overlap)',
      measured: `${c.ratio.toFixed(2)}× (Sluice ${range(c.sluice, c.format)}, peer ${range(c.peer.s, c.format)}), ${c.verdict}`,
      met: c.met,
    }));
}

export function targetsMarkdown(results) {
  const out = [];
  const cells = peerCells(results);
  if (cells.length > 0) {
    const judged = cells.filter((c) => c.judged);
    const n = (v) => judged.filter((c) => c.verdict === v).length;
    const reported = cells.length - judged.length;
    out.push(
      `### 1. Against the peers: ${count(judged)} (${n('ahead')} ahead, ${n('overlap')} within the noise, ${n('behind')} behind)${reported > 0 ? `; ${reported} reported, not judged` : ''}`,
      table(
        [
          'suite',
          'cell',
          'Sluice (median, min–max)',
          'best peer',
          'peer (median, min–max)',
          'Sluice ÷ peer',
          'verdict',
          'note',
        ],
        cells.map((c) => [
          c.suite,
          c.cell,
          range(c.sluice, c.format),
          c.peer.name,
          range(c.peer.s, c.format),
          `${c.ratio.toFixed(2)}×`,
          !c.judged ? `${c.verdict} (reported)` : c.met ? c.verdict : `**${c.verdict}**`,
          c.note,
        ]),
      ),
    );
  }
  const over = overFloorRows(results.http);
  if (over.length > 0) {
    out.push(
      "### 2. Sluice's own cost over the floor, in process: reported, not judged",
      table(
        [
          'framework',
          'clients',
          'path',
          'floor µs',
          "floor's spread µs",
          'Sluice µs',
          'over the floor µs (median, min–max of runs)',
        ],
        over.map((r) => [
          r.framework,
          clients(r.subjects),
          r.path,
          r.floorUs.toFixed(2),
          r.spread.toFixed(2),
          r.sluiceUs.toFixed(2),
          range(r.over, signed),
        ]),
      ),
    );
  }
  for (const [title, rows] of [
    ['3. Redis', redisRows(results.redis)],
    ['4. Atomicity', atomicityRows(results.atomicity)],
    ['5. PostgreSQL', postgresRows(results.postgres)],
    ['6. Edge', edgeRows(results.edge)],
    ['7. Node cluster', clusterRows(results.cluster)],
    ['8. Redis on node-redis', nodeRedisRows(results.redis)],
    ['9. Sliding log at large limits', fullLogRows(results)],
    ['10. Redis at many subjects', manySubjectsRows(results.redis)],
    ['11. Fastify, memory, allowed', fastifyMemoryRows(cells)],
  ]) {
    if (rows.length === 0) continue;
    const body = rows.map((r) => [r.what, r.target, r.measured, yes(r.met)]);
    out.push(`### ${title}: ${count(rows)}`, table(['', 'target', 'measured', ''], body));
  }
  return out.length > 0 ? `${out.join('\n\n')}\n` : 'No suite with targets has results.\n';
}

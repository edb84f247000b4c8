/**
 * The performance targets of the issues, checked against one run's results. Each check says what
 * was asked, what was measured, whether it is met and by how much.
 */

export const TARGETS = {
  // Issue 2: single-policy sliding-window on the memory store.
  core: { hotPerSec: 8e6, spreadPerSec: 3e6 },
  // Issue 3: against the best peer Redis store in the same run.
  redis: { throughputVsBestPeer: 1.5, cpuVsBestPeer: 0.5, bytesPerSubject: 150 },
  // Shares of bare throughput: issue 4 (Express, allowed and denied alike) and issue 5 (Fastify).
  http: {
    express: { memory: { allowed: 0.97, denied: 0.97 }, redis: { allowed: 0.9, denied: 0.9 } },
    fastify: { memory: { allowed: 0.95, denied: 0.9 }, redis: { allowed: 0.7, denied: 0.85 } },
  },
  atomicity: { admitted: 1000, burned: 0 },
};

const pct = (x) => `${(x * 100).toFixed(0)}%`;
const rate = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)}M/s` : `${(x / 1e3).toFixed(1)}k/s`);

function check(area, what, target, measured, met, margin) {
  return { area, what, target, measured, met, margin };
}

function coreChecks(core) {
  const out = [];
  const find = (impl, c, api, subjects) =>
    core.rows.find(
      (r) =>
        r.path === 'allowed' && r.impl === impl && r.case === c && r.api === api && r.subjects === subjects,
    )?.opsPerSec.median;
  const spreadLabel = core.rows.find((r) => r.subjects !== 'hot' && r.path === 'allowed')?.subjects ?? '100k';
  for (const [subjects, floor] of [
    ['hot', TARGETS.core.hotPerSec],
    [spreadLabel, TARGETS.core.spreadPerSec],
  ]) {
    const erl = find('express-rate-limit', 'fixed-window', 'MemoryStore.increment', subjects);
    const rlf = find('rate-limiter-flexible', 'fixed-window', 'RateLimiterMemory.consume', subjects);
    const frl = find('@fastify/rate-limit', 'fixed-window', 'LocalStore.incr', subjects);
    const promise = find('promise floor', 'none', 'await Promise.resolve(object)', subjects);
    const fused = find('fused floor', 'sliding-window', 'the step and a fresh Decision', subjects);
    const bar = Math.max(floor, erl ?? 0, rlf ?? 0);
    for (const api of ['consume', 'decide']) {
      const sluice = find('sluice', 'sliding-window', api, subjects);
      if (sluice === undefined) continue;
      out.push(
        check(
          'core',
          `sliding-window \`${api}\`, ${subjects === 'hot' ? 'one hot subject' : `${subjects} subjects`}: at least ${rate(floor)} and ahead of express-rate-limit (${rate(erl)}) and rate-limiter-flexible (${rate(rlf)})`,
          rate(bar),
          `${rate(sluice)} (${(sluice / frl).toFixed(2)}× @fastify/rate-limit's LRU counter${api === 'consume' && promise ? `; a bare promise: ${rate(promise)}` : ''}${api === 'consume' && fused ? `; consume fused into one function: ${rate(fused)}` : ''})`,
          sluice >= bar,
          sluice >= bar
            ? `+${pct(sluice / bar - 1)}`
            : `${pct(sluice / bar - 1)} (short by ${rate(bar - sluice)})`,
        ),
      );
    }
  }
  return out;
}

function redisChecks(redis) {
  const out = [];
  const sluice = (c) => redis.rows.find((r) => r.impl === 'sluice' && r.case === c);
  const peers = redis.rows.filter((r) => r.impl !== 'sluice');
  const sw = sluice('sliding-window');
  if (sw === undefined || peers.length === 0) return out;
  const best = Math.max(...peers.map((p) => p.decisionsPerSec.median));
  const lowestCpu = Math.min(...peers.map((p) => p.redisCpuMsPer1000.median));
  const t = TARGETS.redis;
  const ratio = sw.decisionsPerSec.median / best;
  out.push(
    check(
      'redis',
      `sliding-window decisions/s at 64 in flight: ${t.throughputVsBestPeer}× the best peer (${rate(best)})`,
      rate(best * t.throughputVsBestPeer),
      `${rate(sw.decisionsPerSec.median)} (${ratio.toFixed(2)}×)`,
      ratio >= t.throughputVsBestPeer,
      `${ratio.toFixed(2)}× of ${t.throughputVsBestPeer}×`,
    ),
  );
  const cpu = sw.redisCpuMsPer1000.median;
  out.push(
    check(
      'redis',
      `sliding-window Redis CPU per 1,000 decisions: at most half the lowest peer's (${lowestCpu.toFixed(2)} ms)`,
      `${(lowestCpu * t.cpuVsBestPeer).toFixed(2)} ms`,
      `${cpu.toFixed(2)} ms`,
      cpu <= lowestCpu * t.cpuVsBestPeer,
      `${(cpu / lowestCpu).toFixed(2)}× the lowest peer's`,
    ),
  );
  const bytes = sw.bytesPerSubject.median;
  out.push(
    check(
      'redis',
      `sliding-window Redis memory per subject${sw.sampleKey ? ` (key of ${sw.sampleKey.length} characters)` : ''}`,
      `≤ ${t.bytesPerSubject} B`,
      `${bytes.toFixed(0)} B`,
      bytes <= t.bytesPerSubject,
      `${bytes <= t.bytesPerSubject ? '' : '+'}${(bytes - t.bytesPerSubject).toFixed(0)} B`,
    ),
  );
  const two = sluice('two policies');
  if (two !== undefined) {
    const scripts = two.scriptsPerDecision.median;
    out.push(
      check(
        'redis',
        'two-policy limiter: one round trip per decision (at most one script call; calls made together share one)',
        '≤ 1',
        scripts.toFixed(2),
        scripts <= 1.0001,
        '',
      ),
    );
  }
  return out;
}

function httpChecks(http) {
  const out = [];
  for (const row of http.rows) {
    if (!row.kind.startsWith('sluice-')) continue;
    const target = TARGETS.http[row.framework][row.kind === 'sluice-memory' ? 'memory' : 'redis'][row.path];
    const ratio = row.ratioToBare.median;
    // The floor server of the same scenario: the most a limiter answering as Sluice does kept in this run.
    const floor = http.rows.find(
      (r) =>
        r.kind === 'floor' &&
        r.framework === row.framework &&
        r.path === row.path &&
        r.subjects === row.subjects,
    )?.ratioToBare.median;
    out.push(
      check(
        'http',
        `${row.framework}, ${row.label}, ${row.path} path, ${row.subjects === 1 ? 'one subject' : `${row.subjects} subjects`}: share of bare throughput`,
        `≥ ${pct(target)}`,
        `${pct(ratio)} (rounds ${pct(row.ratioToBare.min)}–${pct(row.ratioToBare.max)}${floor === undefined ? '' : `; floor ${pct(floor)}`})`,
        ratio >= target,
        // Under a point either way, a decimal: "-0 points" beside "no" would read as a tie.
        `${ratio >= target ? '+' : ''}${((ratio - target) * 100).toFixed(Math.abs(ratio - target) < 0.01 ? 1 : 0)} points`,
      ),
    );
  }
  return out;
}

function atomicityChecks(atomicity) {
  return atomicity.rows
    .filter((r) => r.case.startsWith('sluice'))
    .map((r) =>
      r.variant === 'one policy'
        ? check(
            'atomicity',
            `${r.case.slice(7)}: admitted of ${r.calls} calls, limit ${r.limit}`,
            String(TARGETS.atomicity.admitted),
            `${r.admitted}${r.degraded ? ` (${r.degraded} decided without Redis)` : ''}`,
            r.admitted === TARGETS.atomicity.admitted && !r.degraded,
            '',
          )
        : check(
            'atomicity',
            'two policies: admitted, and wide quota burned by denied calls',
            `${TARGETS.atomicity.admitted}, ${TARGETS.atomicity.burned}`,
            `${r.admitted}, ${r.burned}`,
            r.admitted === TARGETS.atomicity.admitted && r.burned === TARGETS.atomicity.burned && !r.degraded,
            '',
          ),
    );
}

/** Every check the results allow (a suite that did not run has none). */
export function checkTargets(results) {
  return [
    ...(results.core ? coreChecks(results.core) : []),
    ...(results.redis ? redisChecks(results.redis) : []),
    ...(results.http ? httpChecks(results.http) : []),
    ...(results.atomicity ? atomicityChecks(results.atomicity) : []),
  ];
}

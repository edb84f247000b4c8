/**
 * Node's cluster module without Redis: 4 workers keep one limit through the primary. Sluice's
 * ClusterStore (`ClusterStore.primary()` here, `new ClusterStore()` in each worker) beside
 * rate-limiter-flexible's RateLimiterCluster (its RateLimiterClusterMaster here), in the same run on
 * the same workers, in alternating phases: decisions per second over the 4 workers (64 calls in flight
 * in each, subjects round robin) and the primary's CPU per decision (process.cpuUsage in the primary,
 * which does nothing else meanwhile).
 */
import cluster from 'node:cluster';
import { ClusterStore, createLimiter } from '@sluice/core';
import { RateLimiterCluster, RateLimiterClusterMaster, RateLimiterRes } from 'rate-limiter-flexible';
import { pick, policiesOf, progress, subjects, summarize, UNREACHED, writeResults } from '../lib/common.mjs';

const WORKERS = 4;
const IN_FLIGHT = 64;
const TAG = 'sluice-bench';
const settings = pick({
  smoke: { rounds: 1, seconds: 0.3, subjects: 2_000 },
  quick: { rounds: 3, seconds: 1, subjects: 10_000 },
  full: { rounds: 5, seconds: 2, subjects: 10_000 },
});
const IMPLS = ['sluice', 'rate-limiter-flexible'];

if (cluster.isWorker) {
  // A long storeTimeout: on a loaded 2-core machine a slow answer must not be decided by the local fallback.
  const sluice = createLimiter({
    name: 'api',
    policies: policiesOf('sliding-window'),
    store: new ClusterStore(),
    storeTimeout: '10s',
  });
  const flexible = new RateLimiterCluster({
    keyPrefix: 'api',
    points: UNREACHED,
    duration: 60,
    timeoutMs: 10_000,
  });
  let degraded = 0;
  const calls = {
    sluice: async (s) => {
      const d = await sluice.consume(s);
      if (d.degraded) degraded++;
      return d.allowed;
    },
    'rate-limiter-flexible': (s) =>
      flexible.consume(s).then(
        () => true,
        (refusal) => {
          if (refusal instanceof RateLimiterRes) return false;
          throw refusal;
        },
      ),
  };
  const population = subjects(settings.subjects);
  process.on('message', async (message) => {
    if (message?.tag !== TAG) return;
    const call = calls[message.impl];
    let next = (cluster.worker.id * 997) % population.length;
    let done = 0;
    let failed = 0;
    const deadline = Date.now() + message.ms;
    const worker = async () => {
      while (Date.now() < deadline) {
        const s = population[next];
        if (++next === population.length) next = 0;
        if (!(await call(s))) failed++;
        done++;
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    process.send({ tag: TAG, done, failed, degraded });
    degraded = 0;
  });
  process.send({ tag: TAG, ready: true });
} else {
  const started = Date.now();
  ClusterStore.primary();
  new RateLimiterClusterMaster();
  const workers = Array.from({ length: WORKERS }, () => cluster.fork());
  const next = (w) =>
    new Promise((resolve, reject) => {
      const onExit = (code) => reject(new Error(`a worker exited with ${code}`));
      const onMessage = (m) => {
        if (m?.tag !== TAG) return;
        w.off('message', onMessage).off('exit', onExit);
        resolve(m);
      };
      w.on('message', onMessage).once('exit', onExit);
    });
  /** One phase: every worker calls `impl` for `ms`; decisions per second and the primary's µs per decision. */
  const phase = async (impl, ms) => {
    const reports = workers.map(next);
    const cpu = process.cpuUsage();
    const t = process.hrtime.bigint();
    for (const w of workers) w.send({ tag: TAG, impl, ms });
    const done = await Promise.all(reports);
    const seconds = Number(process.hrtime.bigint() - t) / 1e9;
    const { user, system } = process.cpuUsage(cpu);
    const decisions = done.reduce((n, r) => n + r.done, 0);
    const failed = done.reduce((n, r) => n + r.failed, 0);
    const degraded = done.reduce((n, r) => n + r.degraded, 0);
    return { perSec: decisions / seconds, primaryUs: (user + system) / decisions, failed, degraded };
  };
  try {
    await Promise.all(workers.map(next));
    // Warm-up: the JIT in every process, and each limiter known to the primary.
    for (const impl of IMPLS) await phase(impl, settings.seconds * 1000);
    const results = new Map(IMPLS.map((impl) => [impl, []]));
    for (let round = 0; round < settings.rounds; round++) {
      for (const impl of round % 2 === 0 ? IMPLS : [...IMPLS].reverse()) {
        results.get(impl).push(await phase(impl, settings.seconds * 1000));
      }
      progress(`cluster: round ${round + 1}/${settings.rounds} done`);
    }
    const rows = IMPLS.map((impl) => {
      const rounds = results.get(impl);
      return {
        impl,
        case: impl === 'sluice' ? 'ClusterStore' : 'RateLimiterCluster',
        decisionsPerSec: summarize(rounds.map((r) => r.perSec)),
        primaryUsPerDecision: summarize(rounds.map((r) => r.primaryUs)),
        failed: rounds.reduce((n, r) => n + r.failed, 0),
        degraded: rounds.reduce((n, r) => n + r.degraded, 0),
      };
    });
    const clusterSettings = { ...settings, workers: WORKERS, inFlight: IN_FLIGHT };
    writeResults('cluster', { settings: clusterSettings, durationMs: Date.now() - started, rows });
  } finally {
    for (const w of workers) w.kill();
  }
}

/**
 * Edge (issue 31): a fetch handler limited by two policies where fetch runs, Sluice (@sluice/fetch and
 * RedisStore over @upstash/redis) beside @upstash/ratelimit doing the same job (bench/lib/edge/):
 *   1. the bundle an edge app ships: esbuild, minified and tree-shaken for the browser platform with
 *      workerd's conditions, and gzipped; @upstash/redis, the same client for both, left out of both;
 *      and the Node built-ins it imports (none may be); beside it, its floor (lib/edge/floor.mjs): what
 *      Sluice's would weigh with no HTTP layer, or without what two sliding windows never run;
 *   2. HTTP requests to Redis per decision, allowed and denied, counted by a stand-in for Upstash's REST
 *      API in front of a real redis-server (scripts/upstash-rest.cjs, the tests' own) in a process of
 *      its own;
 *   3. CPU per decision in this process (the handler, the client and fetch; not the stand-in's).
 * Decisions are sequential, each a Request through the handler, so each one's requests are its own.
 */
import { builtinModules } from 'node:module';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { Redis } from '@upstash/redis';
import { build } from 'esbuild';
import upstashRest from '../../scripts/upstash-rest.cjs';
import { BENCH_DIR, clientAddress, pick, progress, summarize, writeResults } from '../lib/common.mjs';
import { floorBundles } from '../lib/edge/floor.mjs';
import { sluiceHandler } from '../lib/edge/sluice.mjs';
import { upstashHandler } from '../lib/edge/upstash.mjs';
import { startRedis } from '../lib/redis.mjs';

const { spawnUpstashStandIn } = upstashRest;

const settings = pick({
  smoke: { rounds: 1, decisions: 40, subjects: 100 },
  quick: { rounds: 3, decisions: 500, subjects: 1_000 },
  full: { rounds: 5, decisions: 2_000, subjects: 10_000 },
});
const IMPLS = [
  { impl: 'sluice', label: 'Sluice: @sluice/fetch, RedisStore, two policies', make: sluiceHandler },
  { impl: '@upstash/ratelimit', label: '@upstash/ratelimit: two Ratelimit', make: upstashHandler },
];
const FILES = { sluice: 'sluice', '@upstash/ratelimit': 'upstash' };
/** Limits no allowed run reaches; the denied runs' limits, spent by one subject before they count. */
const OPEN = { perSecond: 1_000_000, perMinute: 1_000_000 };
const TIGHT = { perSecond: 10, perMinute: 20 };

/** `file` bundled as an edge app ships it (`plugins` to build it otherwise): its sizes and Node imports. */
async function bundleOf(file, plugins = []) {
  const result = await build({
    stdin: { contents: `export * from ${JSON.stringify(file)};`, resolveDir: BENCH_DIR, loader: 'js' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    minify: true,
    metafile: true,
    external: ['@upstash/redis'],
    plugins,
    logLevel: 'silent',
    // The built packages, as an app gets them: not the sources the root tsconfig's paths map to.
    tsconfigRaw: {},
  });
  const code = Buffer.from(result.outputFiles[0].text);
  const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
  return {
    minifiedBytes: code.length,
    gzipBytes: gzipSync(code, { level: 9 }).length,
    nodeImports: imports.filter((p) => p.startsWith('node:') || builtinModules.includes(p)),
  };
}

const bundle = (impl) => bundleOf(fileURLToPath(new URL(`../lib/edge/${FILES[impl]}.mjs`, import.meta.url)));

/** `count` decisions through `handler` in turn, for `subjectOf(i)`: requests and CPU µs per decision, statuses. */
async function decide(handler, service, count, subjectOf) {
  const statuses = {};
  const before = await service.requests();
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const request = new Request('https://edge.example/', { headers: { 'cf-connecting-ip': subjectOf(i) } });
    const response = await handler(request);
    await response.arrayBuffer();
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  }
  const { user, system } = process.cpuUsage(cpu);
  return {
    requests: ((await service.requests()) - before) / count,
    cpuUs: (user + system) / count,
    statuses,
  };
}

const started = Date.now();
const redis = await startRedis();
const service = await spawnUpstashStandIn(`redis://127.0.0.1:${redis.port}`);
try {
  const client = () => new Redis({ url: service.url, token: service.token, enableTelemetry: false });
  const bundles = [];
  for (const { impl, label } of IMPLS) bundles.push({ impl, label, ...(await bundle(impl)) });
  const floor = await floorBundles(bundleOf);
  progress(
    `edge: bundles ${bundles.map((b) => `${b.impl} ${(b.gzipBytes / 1000).toFixed(1)} kB gzip`).join(', ')}`,
  );
  const runs = new Map(IMPLS.flatMap(({ impl }) => ['allowed', 'denied'].map((p) => [`${impl}|${p}`, []])));
  for (let round = 0; round < settings.rounds; round++) {
    for (const { impl, make } of round % 2 === 0 ? IMPLS : [...IMPLS].reverse()) {
      const open = make(client(), OPEN);
      // Warm: the first calls load the script (and, for Sluice, learn its hash).
      await decide(open, service, 5, (i) => `198.51.100.${i}`);
      const many = (i) => clientAddress((round * settings.decisions + i) % settings.subjects);
      runs.get(`${impl}|allowed`).push(await decide(open, service, settings.decisions, many));
      // One subject spends its limits first; then every decision is a refusal.
      const tight = make(client(), TIGHT);
      const hot = () => `203.0.113.${round}`;
      await decide(tight, service, TIGHT.perMinute, hot);
      runs.get(`${impl}|denied`).push(await decide(tight, service, settings.decisions, hot));
    }
    progress(`edge: round ${round + 1}/${settings.rounds} done`);
  }
  const rows = [...runs].map(([key, rounds]) => {
    const [impl, path] = key.split('|');
    const statuses = {};
    for (const r of rounds)
      for (const [s, n] of Object.entries(r.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
    return {
      impl,
      label: IMPLS.find((i) => i.impl === impl).label,
      path,
      requestsPerDecision: summarize(rounds.map((r) => r.requests)),
      cpuUsPerDecision: summarize(rounds.map((r) => r.cpuUs)),
      statuses,
    };
  });
  for (const r of rows) {
    progress(
      `edge: ${r.impl}, ${r.path}: ${r.requestsPerDecision.median.toFixed(2)} requests and ${r.cpuUsPerDecision.median.toFixed(0)} µs of CPU a decision; statuses ${JSON.stringify(r.statuses)}`,
    );
  }
  writeResults('edge', {
    settings,
    server: `Redis ${redis.version}`,
    durationMs: Date.now() - started,
    bundles,
    floor,
    rows,
  });
} finally {
  await service.close();
  await redis.stop();
}

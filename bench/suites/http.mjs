/**
 * Suite 3, http: hello-world Express and Fastify apps, each in its own process, bare and behind each
 * limiter on memory and on Redis; the load generator (wrk, or autocannon) in another process. Every
 * limited server is measured on the allowed path (limit never reached) and the denied path (every
 * request answered 429), with one client address and with many. This machine's speed drifts by tens
 * of percent from one second to the next, so every limited run is sandwiched between two runs of its
 * framework's bare app on the same scenario (bare A bare B bare …) and its ratio to bare is to the
 * mean of those two; rounds repeat the whole sequence and the report takes the median ratio.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { measure } from '../http-inprocess.mjs';
import { progress, SMOKE, writeResults } from '../lib/cli.mjs';
import { codeShare } from '../lib/code-share.mjs';
import { load, loadTool } from '../lib/load.mjs';
import { startRedis } from '../lib/redis-server.mjs';
import { summarize } from '../lib/stats.mjs';

const MANY = 10_000;
// wrk takes whole seconds: 1-second runs, and five rounds so that the median shrugs off disturbed ones.
const settings = SMOKE
  ? { rounds: 1, seconds: 1, warmupSeconds: 0, idleMs: Number.POSITIVE_INFINITY }
  : { rounds: 5, seconds: 1, warmupSeconds: 1, idleMs: 3000 };

const APPS = {
  express: fileURLToPath(new URL('../servers/express-app.mjs', import.meta.url)),
  fastify: fileURLToPath(new URL('../servers/fastify-app.mjs', import.meta.url)),
};

/** Each framework's servers: bare first (the ratios' base), its control and the floor, then each limiter on memory and Redis. */
const SERVERS = SMOKE
  ? [
      ['express', 'bare'],
      ['express', 'floor'],
      ['express', 'sluice-memory'],
      ['fastify', 'bare'],
      ['fastify', 'floor'],
      ['fastify', 'sluice-memory'],
    ]
  : [
      ['express', 'bare'],
      ['express', 'control'],
      ['express', 'floor'],
      ['express', 'sluice-memory'],
      ['express', 'sluice-redis'],
      ['express', 'erl-memory'],
      ['express', 'erl-redis'],
      ['express', 'rlf-memory'],
      ['express', 'rlf-redis'],
      ['fastify', 'bare'],
      ['fastify', 'control'],
      ['fastify', 'floor'],
      ['fastify', 'sluice-memory'],
      ['fastify', 'sluice-redis'],
      ['fastify', 'frl-memory'],
      ['fastify', 'frl-redis'],
    ];

/** What each limiter kind is, for the report. */
export const KIND_LABELS = {
  bare: 'bare',
  control: 'control: a second bare app, measured as the limiters are',
  floor: "floor: reads the address and gives Sluice's answer, made once, limiting nothing",
  'sluice-memory': 'Sluice, memory',
  'sluice-redis': 'Sluice, Redis',
  'erl-memory': 'express-rate-limit, memory',
  'erl-redis': 'express-rate-limit + rate-limit-redis',
  'rlf-memory': 'rate-limiter-flexible, memory (few-line middleware)',
  'rlf-redis': 'rate-limiter-flexible, Redis (few-line middleware)',
  'frl-memory': '@fastify/rate-limit, memory',
  'frl-redis': '@fastify/rate-limit, Redis',
};

const SCENARIOS = SMOKE
  ? [
      { path: 'allowed', subjects: 1 },
      { path: 'denied', subjects: 1 },
    ]
  : [
      { path: 'allowed', subjects: 1 },
      { path: 'allowed', subjects: MANY },
      { path: 'denied', subjects: 1 },
      { path: 'denied', subjects: MANY },
    ];

function startServer(framework, kind, redisPort, execArgv = []) {
  const args = kind.endsWith('-redis') ? [kind, String(redisPort)] : [kind];
  const child = fork(APPS[framework], args, { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ framework, kind, child, port: m.port }));
    child.once('exit', (code) => reject(new Error(`${framework} ${kind} exited with ${code}`)));
  });
}

/**
 * The runs of one round, in a fixed order: for each scenario and framework, the bare app (on the
 * allowed path, the same client addresses) before and after each limited server. A bare run between
 * two limited runs serves both.
 */
function runsOf(servers) {
  const runs = [];
  for (const scenario of SCENARIOS) {
    for (const framework of new Set(servers.map((s) => s.framework))) {
      const bare = servers.find((s) => s.framework === framework && s.kind === 'bare');
      const bareRun = { server: bare, scenario: { ...scenario, path: 'allowed' } };
      runs.push(bareRun);
      for (const server of servers) {
        if (server.framework !== framework || server.kind === 'bare') continue;
        // The control has no denied path: its allowed runs are the method's own error.
        if (server.kind === 'control' && scenario.path === 'denied') continue;
        runs.push({ server, scenario }, bareRun);
      }
    }
  }
  return runs;
}

const key = ({ server, scenario }) =>
  `${server.framework}|${server.kind}|${scenario.path}|${scenario.subjects}`;

const started = Date.now();
const tool = loadTool();
const needsRedis = SERVERS.some(([, kind]) => kind.endsWith('-redis'));
const redis = needsRedis ? await startRedis() : undefined;
const servers = [];
try {
  for (const [framework, kind] of SERVERS) servers.push(await startServer(framework, kind, redis?.port));
  progress(
    `http: ${servers.length} servers up; load by ${tool.name} ${tool.version}, ${tool.connections} connections`,
  );
  const runs = runsOf(servers);
  const url = ({ server, scenario }) => `http://127.0.0.1:${server.port}/${scenario.path}`;
  if (settings.warmupSeconds > 0) {
    // JIT warm-up on both paths; the denied one with every client address, long enough that each
    // spends its one allowed request before the rounds.
    progress('http: warm-up');
    for (const server of servers) {
      const base = `http://127.0.0.1:${server.port}`;
      await load(`${base}/allowed`, { seconds: settings.warmupSeconds, subjects: 1 });
      if (server.kind !== 'bare')
        await load(`${base}/denied`, { seconds: 2 * settings.warmupSeconds, subjects: MANY });
    }
  }
  // Per limited run: its result and the mean of the bare runs on either side of it, round by round.
  const limited = runs.filter((r) => r.server.kind !== 'bare');
  const results = new Map(limited.map((r) => [key(r), { runs: [], bare: [] }]));
  const bareResults = new Map();
  /** When each server last took load (a server idle for longer is warmed first). */
  const lastRunAt = new Map();
  for (let round = 0; round < settings.rounds; round++) {
    let before;
    let waiting;
    for (const run of runs) {
      const options = { seconds: settings.seconds, subjects: run.scenario.subjects };
      // A server left idle for a while runs its first second about a fifth slower (seen here after
      // 40 s idle: 9.8k, then 11.9k and 12.1k requests/s): one that waited longer than idleMs gets an
      // unmeasured run first. Without it every limited server, which waits a whole round, was
      // measured cold against a bare app kept busy.
      if (Date.now() - (lastRunAt.get(run.server) ?? 0) > settings.idleMs) await load(url(run), options);
      const result = await load(url(run), options);
      lastRunAt.set(run.server, Date.now());
      if (run.server.kind !== 'bare') {
        results.get(key(run)).runs.push(result);
        waiting = { run, before };
        continue;
      }
      if (!bareResults.has(key(run))) bareResults.set(key(run), []);
      bareResults.get(key(run)).push(result);
      if (waiting !== undefined) {
        results.get(key(waiting.run)).bare.push((waiting.before.rps + result.rps) / 2);
        waiting = undefined;
      }
      before = result;
    }
    progress(`http: round ${round + 1}/${settings.rounds} done (${runs.length} runs)`);
  }
  const row = (run, rounds, bareRps) => {
    const expected = run.scenario.path === 'denied' ? 'non2xx' : '2xx';
    return {
      framework: run.server.framework,
      kind: run.server.kind,
      label: KIND_LABELS[run.server.kind],
      path: run.scenario.path,
      subjects: run.scenario.subjects,
      rps: summarize(rounds.map((r) => r.rps)),
      ratioToBare: summarize(rounds.map((r, i) => r.rps / bareRps[i])),
      p50Ms: summarize(rounds.map((r) => r.p50Ms)),
      p99Ms: summarize(rounds.map((r) => r.p99Ms)),
      // The share of answers on the path measured (2xx when allowed, 429 when denied): 1 is clean.
      onPath: Math.min(
        ...rounds.map((r) => (expected === '2xx' ? r.requests - r.non2xx : r.non2xx) / r.requests),
      ),
      errors: rounds.map((r) => r.errors).filter(Boolean),
    };
  };
  const seen = new Set();
  const rows = [];
  for (const run of runs) {
    if (seen.has(key(run))) continue;
    seen.add(key(run));
    if (run.server.kind === 'bare') {
      const rounds = bareResults.get(key(run));
      rows.push(
        row(
          run,
          rounds,
          rounds.map((r) => r.rps),
        ),
      );
    } else {
      const { runs: rounds, bare } = results.get(key(run));
      rows.push(row(run, rounds, bare));
    }
  }
  // Sluice's own part of a server's CPU, which the throughput ratios above (a few percent against a
  // machine whose speed drifts by tens of percent) cannot resolve: one Sluice memory server per
  // framework under the V8 profiler, on the allowed path with many clients, after a 1-second warm-up.
  const ownShare = {};
  for (const framework of Object.keys(APPS)) {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-http-prof-'));
    const started = Date.now();
    const server = await startServer(framework, 'sluice-memory', undefined, [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
    ]);
    const url = `http://127.0.0.1:${server.port}/allowed`;
    await load(url, { seconds: 1, subjects: MANY });
    const warmMs = Date.now() - started;
    await load(url, { seconds: SMOKE ? 1 : 3, subjects: MANY });
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.send('exit');
    await exited;
    const profile = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), 'utf8'));
    rmSync(dir, { recursive: true });
    ownShare[framework] = codeShare(
      profile,
      ['/packages/core/dist/', `/packages/${framework}/dist/`],
      warmMs,
    );
    progress(
      `http: ${framework}: Sluice's code took ${(ownShare[framework] * 100).toFixed(1)}% of the server's busy CPU`,
    );
  }
  // The same cost without the network (http-inprocess.mjs): CPU per request of Sluice beside the
  // floors that any limiter answering alike pays, steadier than the throughput ratios.
  const inProcess = [];
  const inProcessSettings = { runs: SMOKE ? 1 : 3, requests: SMOKE ? 1000 : 20_000 };
  for (const framework of Object.keys(APPS)) {
    for (const subjects of [1, MANY]) {
      const base = framework === 'fastify' ? 'plugin' : 'bare';
      const results = measure({
        framework,
        variants: [base, 'headers', 'sluice', 'denied-floor', 'sluice-denied'],
        ...inProcessSettings,
        subjects,
      });
      inProcess.push({ framework, subjects, results });
      progress(`http: ${framework}, ${subjects} client(s), in process: measured`);
    }
  }
  const file = writeResults('http', {
    settings: { ...settings, manySubjects: MANY, tool },
    ownShare,
    inProcess,
    inProcessSettings,
    redisVersion: redis?.version,
    durationMs: Date.now() - started,
    rows,
  });
  progress(`http: wrote ${file}`);
} finally {
  for (const s of servers) s.child.kill();
  await redis?.stop();
}

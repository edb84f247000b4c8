/**
 * HTTP, two measures of the same apps (lib/apps.mjs).
 *
 * Over loopback: each app in its own process, bare and behind each limiter on memory and on Redis, load
 * from another process (lib/load.mjs). This machine's speed drifts by tens of percent within seconds, so
 * every limited run sits between two runs of its framework's bare app (bare A bare A' bare B …) and its
 * share of bare is to the mean of those two; rounds repeat the sequence, the median share is reported.
 *
 * In process: the apps serve requests made in process, on Node's own request and response objects over
 * a socket that drops what is written, so a limiter's microseconds show. Each variant (an app kind, on
 * /allowed or with "/denied" on /denied) runs in processes of its own (an Express request has a hidden
 * class of its own, so one variant's property accesses would slow another's), the variants in turn, for
 * `runs` runs: CPU µs per request (user + system over `requests` requests, one at a time, after a
 * warm-up), the fastest of 3 rounds. Sluice's cost is its distance from the floor of the same run.
 *
 *   node bench/suites/http.mjs [--smoke|--full]     the suite
 *   node bench/suites/http.mjs --inprocess express [--variants bare,floor,sluice-memory,floor/denied]
 *     [--runs 3] [--requests 20000] [--subjects 1] [--profile]   the in-process measure alone; with
 *     --profile, the functions whose self time per request differs most from the first variant's
 */
import { execFileSync, fork } from 'node:child_process';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../lib/apps.mjs';
import { clientAddress, FULL, pick, progress, SMOKE, summarize, writeResults } from '../lib/common.mjs';
import { load, loadTool, stopLoad } from '../lib/load.mjs';
import { profiled, selfTimes } from '../lib/profile.mjs';
import { startRedis } from '../lib/redis.mjs';
import { clients, fixed, range } from '../lib/targets.mjs';

const HERE = fileURLToPath(import.meta.url);
const APPS = fileURLToPath(new URL('../lib/apps.mjs', import.meta.url));
const MANY = 10_000;
/** The apps trust X-Forwarded-For on purpose (the load plays many clients): no warning about it. */
const QUIET = { NODE_NO_WARNINGS: '1' };

// ---- in process -------------------------------------------------------------------------------

/** A socket that takes every write and drops it. */
class Sink extends Writable {
  remoteAddress = '127.0.0.1';
  _write(_chunk, _encoding, done) {
    done();
  }
  _writev(_chunks, done) {
    done();
  }
  setTimeout() {}
}

/** One GET from client `i` as the load generator sends it; resolves to the status when answered. */
function request(handle, path, i) {
  return new Promise((resolve) => {
    const socket = new Sink();
    const req = new IncomingMessage(socket);
    req.method = 'GET';
    req.url = path;
    req.headers = { host: '127.0.0.1', 'x-forwarded-for': clientAddress(i) };
    req.push(null);
    const res = new ServerResponse(req);
    res.assignSocket(socket);
    res.on('finish', () => {
      res.detachSocket(socket);
      resolve(res.statusCode);
    });
    handle(req, res);
  });
}

/**
 * In a child: one variant, an app with only the route measured, for each client count: the fastest
 * round's CPU µs per request, the status, and with `profile` the self time per request by function.
 */
async function child({ framework, variant, requests, childRounds, warmUp, subjectCounts, profile }) {
  const [kind, route = 'allowed'] = variant.split('/');
  // One app for every client count: a second would put a second limiter in the process.
  const { handle } = await buildApp(framework, kind, undefined, [route]);
  const out = [];
  for (const subjects of subjectCounts) {
    let sent = 0;
    const cpuPerRequest = async (n) => {
      const start = process.cpuUsage();
      for (let i = 0; i < n; i++) await request(handle, `/${route}`, sent++ % subjects);
      const { user, system } = process.cpuUsage(start);
      return (user + system) / n;
    };
    // On /denied, every client has spent its one allowed request before the rounds.
    await cpuPerRequest(route === 'denied' ? Math.max(warmUp, subjects + 1_000) : warmUp);
    const rounds = [];
    const measure = async () => {
      for (let r = 0; r < childRounds; r++) rounds.push(await cpuPerRequest(requests));
    };
    const self = profile ? selfTimes(await profiled(measure)) : await measure();
    const status = await request(handle, `/${route}`, 0);
    const perRequest = self && [...self].map(([fn, us]) => [fn, us / (childRounds * requests)]);
    out.push({ subjects, variant, usPerRequest: Math.min(...rounds), status, self: perRequest });
  }
  return out;
}

/** Each variant's CPU µs per request per client count, run by run: the variants in turn, each in fresh processes. */
export function inProcess({
  framework,
  variants,
  runs,
  requests,
  childRounds = 3,
  warmUp = 5000,
  subjectCounts,
  profile,
}) {
  const results = new Map();
  for (let run = 0; run < runs; run++) {
    for (const variant of variants) {
      const job = {
        framework,
        variant,
        requests,
        childRounds,
        warmUp,
        subjectCounts,
        profile: profile && run === runs - 1,
      };
      const env = { ...process.env, ...QUIET, SLUICE_INPROCESS_CHILD: JSON.stringify(job) };
      for (const r of JSON.parse(execFileSync(process.execPath, [HERE], { encoding: 'utf8', env }))) {
        const key = `${r.subjects}|${variant}`;
        if (!results.has(key))
          results.set(key, { subjects: r.subjects, variant, status: r.status, runs: [] });
        results.get(key).runs.push(r.usPerRequest);
        if (r.self) results.get(key).self = new Map(r.self);
      }
    }
  }
  return [...results.values()];
}

// ---- over loopback ----------------------------------------------------------------------------

/** Hono, Koa and NestJS (on Express), each beside its usual limiter, on the in-memory store. */
const NEWER_FRAMEWORKS = {
  hono: ['sluice-memory', 'hrl-memory'],
  koa: ['sluice-memory', 'krl-memory'],
  nestjs: ['sluice-memory', 'nt-memory'],
};
/** The in-process measure (target 2) is set for Express and Fastify, whose floors the apps build. */
const IN_PROCESS = ['express', 'fastify'];

const settings = pick({
  smoke: {
    rounds: 1,
    seconds: 0.3,
    warmSeconds: 0,
    kinds: {
      express: ['sluice-memory', 'erl-memory'],
      fastify: ['sluice-memory', 'frl-memory'],
      ...NEWER_FRAMEWORKS,
    },
    scenarios: [{ path: 'allowed', subjects: 1 }],
    inProcess: { runs: 1, requests: { express: 500, fastify: 2000 }, warmUp: 1000, subjectCounts: [1] },
  },
  quick: {
    rounds: 3,
    seconds: 1,
    warmSeconds: 0,
    kinds: {
      express: ['sluice-memory', 'erl-memory', 'rlf-memory'],
      fastify: ['sluice-memory', 'frl-memory'],
      ...NEWER_FRAMEWORKS,
    },
    scenarios: [{ path: 'allowed', subjects: MANY }],
    inProcess: {
      runs: 3,
      requests: { express: 1000, fastify: 10_000 },
      warmUp: 2000,
      subjectCounts: [1, MANY],
    },
  },
  full: {
    rounds: 5,
    seconds: 1,
    warmSeconds: 1,
    kinds: {
      express: [
        'control',
        'floor',
        'sluice-memory',
        'sluice-redis',
        'erl-memory',
        'erl-redis',
        'rlf-memory',
        'rlf-redis',
      ],
      fastify: ['control', 'floor', 'sluice-memory', 'sluice-redis', 'frl-memory', 'frl-redis'],
      ...NEWER_FRAMEWORKS,
    },
    scenarios: ['allowed', 'denied'].flatMap((path) => [1, MANY].map((subjects) => ({ path, subjects }))),
    inProcess: {
      runs: 5,
      requests: { express: 10_000, fastify: 40_000 },
      warmUp: 5000,
      subjectCounts: [1, MANY],
    },
  },
});
/** A server idle for longer first takes an unmeasured run: after a pause this machine runs a Node server's first second about a fifth slower. */
const IDLE_MS = 3000;

function startServer(framework, kind, redisPort) {
  const args = [framework, kind, ...(redisPort ? [String(redisPort)] : [])];
  const child = fork(APPS, args, {
    env: { ...process.env, ...QUIET },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', ({ port }) => resolve({ framework, kind, child, port }));
    child.once('exit', (code) => reject(new Error(`${framework} ${kind} exited with ${code}`)));
  });
}

/** Hono, Koa and NestJS: with 10,000 clients only, where a run has several client counts (time). */
function scenariosOf(framework) {
  const all = settings.scenarios;
  const many = all.filter((s) => s.subjects === MANY);
  return framework in NEWER_FRAMEWORKS && many.length > 0 ? many : all;
}

/** The runs of one round: per framework its bare app, then each limited app's scenarios, each followed by the bare app. */
function runsOf(servers) {
  const runs = [];
  for (const framework of Object.keys(settings.kinds)) {
    const bare = servers.find((s) => s.framework === framework && s.kind === 'bare');
    runs.push({ server: bare, scenario: settings.scenarios[0] });
    for (const server of servers.filter((s) => s.framework === framework && s.kind !== 'bare')) {
      for (const scenario of scenariosOf(framework)) {
        // The control has no denied path: its allowed runs are the method's own error.
        if (server.kind === 'control' && scenario.path === 'denied') continue;
        runs.push({ server, scenario }, { server: bare, scenario });
      }
    }
  }
  return runs;
}

async function overLoopback(redisPort) {
  const servers = [];
  try {
    for (const framework of Object.keys(settings.kinds)) {
      for (const kind of ['bare', ...settings.kinds[framework]])
        servers.push(await startServer(framework, kind, redisPort));
    }
    const tool = loadTool();
    progress(
      `http: ${servers.length} servers up; load by ${tool.name} ${tool.version}, ${tool.connections} connections`,
    );
    const url = ({ server, scenario }) => `http://127.0.0.1:${server.port}/${scenario.path}`;
    // JIT warm-up, every server at once; then on /denied each client spends its one allowed request.
    if (!SMOKE)
      await Promise.all(
        servers.map((s) => load(`http://127.0.0.1:${s.port}/allowed`, { seconds: 2, subjects: MANY })),
      );
    if (settings.scenarios.some((s) => s.path === 'denied')) {
      // Until nearly every answer is a 429: a slow server takes more than one pass over the clients.
      for (const s of servers.filter((x) => x.kind !== 'bare' && x.kind !== 'control')) {
        for (let pass = 0; pass < 5; pass++) {
          const r = await load(`http://127.0.0.1:${s.port}/denied`, { seconds: 2, subjects: MANY });
          if (r.non2xx >= 0.99 * r.requests) break;
        }
      }
    }
    const runs = runsOf(servers);
    const key = ({ server, scenario }) =>
      `${server.framework}|${server.kind}|${scenario.path}|${scenario.subjects}`;
    const results = new Map();
    const lastRunAt = new Map();
    for (let round = 0; round < settings.rounds; round++) {
      let bareBefore;
      let waiting;
      for (const run of runs) {
        const options = { seconds: settings.seconds, subjects: run.scenario.subjects };
        if (Date.now() - (lastRunAt.get(run.server) ?? 0) > IDLE_MS && settings.warmSeconds > 0) {
          await load(url(run), { ...options, seconds: settings.warmSeconds });
        }
        const result = await load(url(run), options);
        lastRunAt.set(run.server, Date.now());
        const k = run.server.kind === 'bare' ? `${run.server.framework}|bare` : key(run);
        if (!results.has(k)) results.set(k, { run, results: [], bare: [] });
        if (run.server.kind !== 'bare') {
          waiting = { entry: results.get(k), before: bareBefore };
          results.get(k).results.push(result);
          continue;
        }
        results.get(k).results.push(result);
        results.get(k).bare.push(result.rps);
        if (waiting !== undefined) waiting.entry.bare.push((waiting.before.rps + result.rps) / 2);
        waiting = undefined;
        bareBefore = result;
      }
      progress(`http: round ${round + 1}/${settings.rounds} done (${runs.length} runs)`);
    }
    return [...results.values()].map(({ run, results: rounds, bare }) => {
      const expected = run.scenario.path === 'denied' ? 'non2xx' : '2xx';
      const isBare = run.server.kind === 'bare';
      return {
        framework: run.server.framework,
        kind: run.server.kind,
        path: isBare ? 'allowed' : run.scenario.path,
        subjects: isBare ? 'any' : run.scenario.subjects,
        rps: summarize(rounds.map((r) => r.rps)),
        ratioToBare: summarize(rounds.map((r, i) => r.rps / bare[i])),
        p50Ms: summarize(rounds.map((r) => r.p50Ms)),
        p99Ms: summarize(rounds.map((r) => r.p99Ms)),
        // The share of answers on the path measured (2xx when allowed, 429 when denied): 1 is clean.
        onPath: Math.min(
          ...rounds.map((r) => (expected === '2xx' ? r.requests - r.non2xx : r.non2xx) / r.requests),
        ),
        errors: rounds.map((r) => r.errors).filter(Boolean),
      };
    });
  } finally {
    for (const s of servers) s.child.kill();
    stopLoad();
  }
}

// ---- main -------------------------------------------------------------------------------------

if (process.env.SLUICE_INPROCESS_CHILD !== undefined) {
  console.log(JSON.stringify(await child(JSON.parse(process.env.SLUICE_INPROCESS_CHILD))));
  process.exit(0);
} else if (process.argv.includes('--inprocess')) {
  const args = process.argv.slice(2).filter((a) => a !== '--inprocess');
  const option = (name, fallback) =>
    args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : fallback;
  const framework = args[0]?.startsWith('--') ? 'express' : (args[0] ?? 'express');
  const variants = option('variants', 'bare,floor,sluice-memory').split(',');
  const childRounds = Number(option('rounds', 3));
  const [runs, requests, subjects] = [
    ['runs', 3],
    ['requests', 20_000],
    ['subjects', 1],
  ].map(([n, d]) => Number(option(n, d)));
  const profile = args.includes('--profile');
  const results = inProcess({
    framework,
    variants,
    runs,
    requests,
    childRounds,
    subjectCounts: [subjects],
    profile,
  });
  const base = summarize(results[0].runs).median;
  console.log(
    `${framework}, in process, ${clients(subjects)}, CPU µs per request (median of ${runs} runs, min–max)`,
  );
  for (const { variant, status, runs: values } of results) {
    const s = summarize(values);
    const over = (s.median - base).toFixed(2);
    console.log(
      `${variant.padEnd(22)} ${status}  ${range(s, fixed(2)).padStart(22)}  ${over.padStart(7)} over the first`,
    );
  }
  for (const { variant, self } of profile ? results.slice(1) : []) {
    console.log(`\n${variant} against ${variants[0]}: self time per request (µs), largest differences`);
    const first = results[0].self;
    const fns = [...new Set([...first.keys(), ...self.keys()])].map((fn) => [
      fn,
      first.get(fn) ?? 0,
      self.get(fn) ?? 0,
    ]);
    fns.sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]));
    for (const [fn, x, y] of fns.slice(0, 15))
      console.log(`${[y - x, x, y].map((v) => v.toFixed(3).padStart(8)).join(' ')}  ${fn}`);
  }
} else {
  const started = Date.now();
  const needsRedis = Object.values(settings.kinds).some((kinds) => kinds.some((k) => k.endsWith('-redis')));
  const redis = needsRedis ? await startRedis() : undefined;
  try {
    const rows = await overLoopback(redis?.port);
    progress(`http: over loopback in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    // Sluice's own cost over the floors, in process (target 2).
    const variants = [
      ...(FULL ? ['bare'] : []),
      'floor',
      'sluice-memory',
      'floor/denied',
      'sluice-memory/denied',
    ];
    const inProcessRows = [];
    for (const framework of IN_PROCESS) {
      const { requests, ...rest } = settings.inProcess;
      for (const r of inProcess({ framework, variants, requests: requests[framework], ...rest })) {
        inProcessRows.push({ framework, ...r, usPerRequest: summarize(r.runs) });
      }
      progress(`http: ${framework}, in process: measured`);
    }
    const httpSettings = { ...settings, manySubjects: MANY, tool: loadTool() };
    writeResults('http', {
      settings: httpSettings,
      inProcess: inProcessRows,
      redisVersion: redis?.version,
      durationMs: Date.now() - started,
      rows,
    });
  } finally {
    await redis?.stop();
  }
}

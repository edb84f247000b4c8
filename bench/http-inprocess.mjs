/**
 * A request's CPU cost without the network: the breakdown apps (servers/breakdown-app.mjs) served
 * requests made in process, on Node's own request and response objects over a socket that drops what
 * is written. Over loopback, a request's cost is mostly the kernel's and the ratios of http-breakdown
 * move by several percent between runs on this machine; here a limiter's few microseconds show, and
 * under the profiler (--profile) they show by function.
 *
 *   node bench/http-inprocess.mjs [express|fastify] [--variants bare,headers,sluice] [--runs 3]
 *     [--requests 40000] [--subjects 1] [--profile]
 *
 * Each variant runs in processes of its own (an Express request has a hidden class of its own, so
 * one variant's property accesses would slow another's in a shared process), `--runs` times in turn
 * with the others. Per variant: the median over runs of each run's fastest round, in CPU µs per request
 * (this process's user + system time over `--requests` requests, one at a time, after a warm-up of
 * 5,000), the clients' addresses cycling through `--subjects` (in X-Forwarded-For; trust proxy is on). With --profile, the rounds of the last run of each variant are under the V8 CPU profiler
 * (sampling every 100 µs), and the functions whose self time per request differs most from the first
 * variant's are listed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { clientAddress } from './lib/load.mjs';
import { median } from './lib/stats.mjs';
import { buildApp } from './servers/breakdown-app.mjs';

const args = process.argv.slice(2);
function option(name, fallback) {
  const at = args.indexOf(`--${name}`);
  return at === -1 ? fallback : args[at + 1];
}
const framework = args[0]?.startsWith('--') ? 'express' : (args[0] ?? 'express');
const REQUESTS = Number(option('requests', 40_000));
const SUBJECTS = Number(option('subjects', 1));
const WARM_UP = 5_000;
const ROUNDS = 3;

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

let sent = 0;
/** One GET /allowed from the next of SUBJECTS clients, as the http suite's load sends it; resolves when answered. */
function request(handle) {
  return new Promise((resolve) => {
    const socket = new Sink();
    const req = new IncomingMessage(socket);
    req.method = 'GET';
    req.url = '/allowed';
    req.headers = { host: '127.0.0.1', 'x-forwarded-for': clientAddress(sent++ % SUBJECTS) };
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

/** CPU µs per request over `n` requests. */
async function cpuPerRequest(handle, n) {
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await request(handle);
  const { user, system } = process.cpuUsage(start);
  return (user + system) / n;
}

if (process.env.SLUICE_INPROCESS_VARIANT !== undefined) {
  // A child: one variant, its fastest round.
  const { handle } = await buildApp(framework, process.env.SLUICE_INPROCESS_VARIANT);
  await cpuPerRequest(handle, WARM_UP);
  const profileTo = process.env.SLUICE_INPROCESS_PROFILE;
  const session = profileTo === undefined ? undefined : new Session();
  if (session !== undefined) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await cpuPerRequest(handle, REQUESTS));
  if (session !== undefined) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(profileTo, JSON.stringify(profile));
  }
  console.log(JSON.stringify({ usPerRequest: Math.min(...rounds), status: await request(handle) }));
} else {
  const variants = option('variants', 'bare,headers,sluice').split(',');
  const runs = Number(option('runs', 3));
  const profile = args.includes('--profile');
  const dir = mkdtempSync(join(tmpdir(), 'sluice-inprocess-'));
  const results = new Map(variants.map((v) => [v, []]));
  const statuses = new Map();
  try {
    for (let run = 0; run < runs; run++) {
      for (const variant of variants) {
        const env = { ...process.env, SLUICE_INPROCESS_VARIANT: variant };
        if (profile && run === runs - 1) env.SLUICE_INPROCESS_PROFILE = join(dir, `${variant}.cpuprofile`);
        const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), ...args], {
          encoding: 'utf8',
          env,
        });
        const { usPerRequest, status } = JSON.parse(out);
        results.get(variant).push(usPerRequest);
        statuses.set(variant, status);
      }
    }
    const base = median(results.get(variants[0]));
    console.log(
      `${framework}, in process, ${SUBJECTS} client(s), CPU µs per request (median of ${runs} runs' fastest rounds of ${REQUESTS})`,
    );
    console.log('variant          status   µs/request   over the first');
    for (const v of variants) {
      const us = median(results.get(v));
      console.log(
        `${v.padEnd(16)} ${String(statuses.get(v)).padStart(6)}   ${us.toFixed(2).padStart(10)}   ${(us - base).toFixed(2).padStart(8)}`,
      );
    }
    if (profile) {
      const selfTimes = variants.map((v) => selfPerRequest(join(dir, `${v}.cpuprofile`), ROUNDS * REQUESTS));
      for (let i = 1; i < variants.length; i++) {
        console.log(
          `\n${variants[i]} against ${variants[0]}: self time per request (µs), largest differences`,
        );
        for (const [fn, a, b] of differences(selfTimes[0], selfTimes[i]).slice(0, 15)) {
          console.log(
            `${(b - a).toFixed(3).padStart(8)} ${a.toFixed(3).padStart(8)} ${b.toFixed(3).padStart(8)}  ${fn}`,
          );
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** µs of self time per request by function, from the profile in `file`. */
function selfPerRequest(file, requests) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const usPerSample = (profile.endTime - profile.startTime) / profile.samples.length;
  const self = new Map();
  for (const id of profile.samples) {
    const { functionName, url, lineNumber } = nodes.get(id);
    if (functionName === '(idle)') continue;
    const where = url.replace(/.*node_modules\/\.pnpm\/([^/]+)\/.*/, '$1').replace(/.*\/packages\//, '');
    const fn = `${functionName || '(anonymous)'} ${where}${where ? `:${lineNumber + 1}` : ''}`;
    self.set(fn, (self.get(fn) ?? 0) + usPerSample / requests);
  }
  return self;
}

/** [function, a, b] for every function in either, largest |b - a| first. */
function differences(a, b) {
  const fns = new Set([...a.keys(), ...b.keys()]);
  return [...fns]
    .map((fn) => [fn, a.get(fn) ?? 0, b.get(fn) ?? 0])
    .sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]));
}

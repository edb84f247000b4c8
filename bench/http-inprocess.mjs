/**
 * A request's CPU cost without the network: the breakdown apps (servers/breakdown-app.mjs) serve
 * requests made in process, on Node's own request and response objects over a socket that drops what
 * is written. Over loopback, a request's cost is mostly the kernel's and the ratios of http-breakdown
 * move by several percent between runs on this machine; here a limiter's few microseconds show, and
 * under the profiler (--profile) they show by function. The http suite reports `measure` for Sluice
 * and its floors.
 *
 *   node bench/http-inprocess.mjs [express|fastify] [--variants bare,headers,sluice] [--runs 3]
 *     [--requests 40000] [--subjects 1] [--profile]
 *
 * Each variant runs in processes of its own (an Express request has a hidden class of its own, so
 * one variant's property accesses would slow another's in a shared process), `--runs` times in turn
 * with the others. Per variant: the median over runs of each run's fastest round, in CPU µs per request
 * (the process's user + system time over `--requests` requests, one at a time, after a warm-up of
 * 5,000), the clients' addresses cycling through `--subjects` (in X-Forwarded-For; trust proxy is on).
 * With --profile, the rounds of the last run of each variant are under the V8 CPU profiler (sampling
 * every 100 µs), and the functions whose self time per request differs most from the first variant's
 * are listed.
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
import { selfTimes } from './lib/self-time.mjs';
import { median } from './lib/stats.mjs';
import { buildApp } from './servers/breakdown-app.mjs';

const WARM_UP = 5_000;
const ROUNDS = 3;
const HERE = fileURLToPath(import.meta.url);
/** Set in a child: what it measures. */
const CHILD =
  process.env.SLUICE_INPROCESS_CHILD === undefined
    ? undefined
    : JSON.parse(process.env.SLUICE_INPROCESS_CHILD);

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
/** One GET /allowed from the next of the child's clients, as the http suite's load sends it; resolves when answered. */
function request(handle) {
  return new Promise((resolve) => {
    const socket = new Sink();
    const req = new IncomingMessage(socket);
    req.method = 'GET';
    req.url = '/allowed';
    req.headers = { host: '127.0.0.1', 'x-forwarded-for': clientAddress(sent++ % CHILD.subjects) };
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

/**
 * Each variant's CPU µs per request: the median over `runs` runs (each in a process of its own, the
 * variants in turn) of each run's fastest round, and the status it answers. With `profileDir`, the
 * last run's rounds are profiled into `<variant>.cpuprofile` there.
 */
export function measure({ framework, variants, runs = 3, requests = 40_000, subjects = 1, profileDir }) {
  const results = new Map(variants.map((v) => [v, []]));
  const statuses = new Map();
  for (let run = 0; run < runs; run++) {
    for (const variant of variants) {
      const child = { framework, variant, requests, subjects };
      if (profileDir !== undefined && run === runs - 1)
        child.profile = join(profileDir, `${variant}.cpuprofile`);
      const out = execFileSync(process.execPath, [HERE], {
        encoding: 'utf8',
        env: { ...process.env, SLUICE_INPROCESS_CHILD: JSON.stringify(child) },
      });
      const { usPerRequest, status } = JSON.parse(out);
      results.get(variant).push(usPerRequest);
      statuses.set(variant, status);
    }
  }
  return variants.map((variant) => ({
    variant,
    usPerRequest: median(results.get(variant)),
    status: statuses.get(variant),
  }));
}

if (CHILD !== undefined) {
  // A child: one variant, its fastest round.
  const { handle } = await buildApp(CHILD.framework, CHILD.variant);
  await cpuPerRequest(handle, WARM_UP);
  const session = CHILD.profile === undefined ? undefined : new Session();
  if (session !== undefined) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  const rounds = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(await cpuPerRequest(handle, CHILD.requests));
  if (session !== undefined) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(CHILD.profile, JSON.stringify(profile));
  }
  console.log(JSON.stringify({ usPerRequest: Math.min(...rounds), status: await request(handle) }));
} else if (process.argv[1] === HERE) {
  const args = process.argv.slice(2);
  const option = (name, fallback) => {
    const at = args.indexOf(`--${name}`);
    return at === -1 ? fallback : args[at + 1];
  };
  const framework = args[0]?.startsWith('--') ? 'express' : (args[0] ?? 'express');
  const variants = option('variants', 'bare,headers,sluice').split(',');
  const runs = Number(option('runs', 3));
  const requests = Number(option('requests', 40_000));
  const subjects = Number(option('subjects', 1));
  const profileDir = args.includes('--profile')
    ? mkdtempSync(join(tmpdir(), 'sluice-inprocess-'))
    : undefined;
  try {
    const results = measure({ framework, variants, runs, requests, subjects, profileDir });
    const base = results[0].usPerRequest;
    console.log(
      `${framework}, in process, ${subjects} client(s), CPU µs per request (median of ${runs} runs' fastest rounds of ${requests})`,
    );
    console.log('variant          status   µs/request   over the first');
    for (const { variant, usPerRequest, status } of results) {
      console.log(
        `${variant.padEnd(16)} ${String(status).padStart(6)}   ${usPerRequest.toFixed(2).padStart(10)}   ${(usPerRequest - base).toFixed(2).padStart(8)}`,
      );
    }
    if (profileDir !== undefined) {
      const selfTimes = variants.map((v) =>
        selfPerRequest(join(profileDir, `${v}.cpuprofile`), ROUNDS * requests),
      );
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
    if (profileDir !== undefined) rmSync(profileDir, { recursive: true, force: true });
  }
}

/** µs of self time per request by function, from the profile in `file`; idle time left out. */
function selfPerRequest(file, requests) {
  const self = selfTimes(JSON.parse(readFileSync(file, 'utf8')));
  self.delete('(idle)');
  for (const [fn, us] of self) self.set(fn, us / requests);
  return self;
}

/** [function, a, b] for every function in either, largest |b - a| first. */
function differences(a, b) {
  const fns = new Set([...a.keys(), ...b.keys()]);
  return [...fns]
    .map((fn) => [fn, a.get(fn) ?? 0, b.get(fn) ?? 0])
    .sort((x, y) => Math.abs(y[2] - y[1]) - Math.abs(x[2] - x[1]));
}

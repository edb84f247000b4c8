/**
 * Where a limited request's cost goes: the same hello-world app bare, (Fastify) with an empty plugin
 * registered, reading the client address, also setting the two RateLimit headers, and with Sluice
 * (servers/breakdown-app.mjs), measured in interleaved 1-second runs, one subject, allowed path. The
 * parts before Sluice are what any limiter plugin that keys on the address and sends headers pays;
 * the last step is Sluice's own.
 *
 *   node bench/http-breakdown.mjs [express|fastify] [--rounds 8]
 *
 * Per variant, medians over rounds of: requests per second, its ratio to the bare run of the same
 * round, and the server's CPU per request (from /proc, Linux) with the same ratio (a CPU-bound
 * server's throughput is the inverse of its CPU per request, and that figure moves less with the
 * load generator's share of the machine).
 */
import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from './lib/load.mjs';
import { median } from './lib/stats.mjs';

const framework = process.argv[2] ?? 'express';
const at = process.argv.indexOf('--rounds');
const rounds = at === -1 ? 8 : Number(process.argv[at + 1]);
// Each variant adds one part to the one before (breakdown-app.mjs).
const VARIANTS =
  framework === 'fastify'
    ? ['bare', 'plugin', 'ip', 'headers', 'sluice']
    : ['bare', 'ip', 'headers', 'sluice'];
const APP = fileURLToPath(new URL('./servers/breakdown-app.mjs', import.meta.url));

function start(variant) {
  const child = fork(APP, [framework, variant], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve({ variant, child, url: `http://127.0.0.1:${m.port}/allowed` }));
    child.once('exit', (code) => reject(new Error(`${framework} ${variant} exited with ${code}`)));
  });
}

/** The process's user + system CPU in ms, or NaN where /proc is missing. */
function cpuMs(pid) {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return Number.NaN;
  const fields = readFileSync(file, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const servers = [];
try {
  for (const v of VARIANTS) servers.push(await start(v));
  for (const s of servers) await load(s.url, { seconds: 2, subjects: 1 });
  const runs = new Map(VARIANTS.map((v) => [v, []]));
  for (let round = 0; round < rounds; round++) {
    for (const s of servers) {
      const before = cpuMs(s.child.pid);
      const { rps, requests } = await load(s.url, { seconds: 1, subjects: 1 });
      runs.get(s.variant).push({ rps, usPerRequest: ((cpuMs(s.child.pid) - before) * 1000) / requests });
    }
    process.stderr.write(`round ${round + 1}/${rounds}\n`);
  }
  const bare = runs.get('bare');
  console.log(`${framework}, allowed path, one subject, ${rounds} rounds of 1 s (medians)`);
  console.log('variant   req/s    share of bare   CPU µs/request   share of bare (by CPU)');
  for (const v of VARIANTS) {
    const r = runs.get(v);
    const share = median(r.map((x, i) => x.rps / bare[i].rps));
    const cpuShare = median(r.map((x, i) => bare[i].usPerRequest / x.usPerRequest));
    console.log(
      `${v.padEnd(9)} ${median(r.map((x) => x.rps))
        .toFixed(0)
        .padStart(6)}   ${(share * 100).toFixed(1).padStart(6)}%        ${median(r.map((x) => x.usPerRequest))
        .toFixed(1)
        .padStart(6)}           ${(cpuShare * 100).toFixed(1).padStart(6)}%`,
    );
  }
} finally {
  for (const s of servers) s.child.kill();
}

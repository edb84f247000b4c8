/**
 * The HTTP load generator, always in a process of its own: wrk when installed (the least CPU per
 * request), autocannon otherwise (SLUICE_BENCH_LOAD=autocannon forces it), in one long-lived child
 * that takes each run over IPC. Every request carries X-Forwarded-For, cycling through `subjects`
 * client addresses (one address when 1), so a bare app's load is the same whatever the scenario.
 */
import { execFile, fork, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clientAddress } from './common.mjs';

const CONNECTIONS = 32;
const HERE = fileURLToPath(import.meta.url);

let tool;
/** 'wrk' or 'autocannon', with its version, for the report. */
export function loadTool() {
  tool ??= findTool();
  return tool;
}

function findTool() {
  if (process.env.SLUICE_BENCH_LOAD !== 'autocannon') {
    const probe = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
    const version = /wrk (\S+)/.exec(`${probe.stdout}${probe.stderr}`)?.[1];
    if (probe.error === undefined && version !== undefined)
      return { name: 'wrk', version, connections: CONNECTIONS };
  }
  const { version } = createRequire(import.meta.url)('autocannon/package.json');
  return { name: 'autocannon', version, connections: CONNECTIONS };
}

let scriptDir;
function wrkScript(n) {
  scriptDir ??= mkdtempSync(join(tmpdir(), 'sluice-wrk-'));
  const file = join(scriptDir, `clients-${n}.lua`);
  writeFileSync(
    file,
    `local i = 0
request = function()
  i = (i + 1) % ${n}
  local addr = "10." .. (math.floor(i / 65536) % 256) .. "." .. (math.floor(i / 256) % 256) .. "." .. (i % 256)
  return wrk.format(nil, nil, { ["X-Forwarded-For"] = addr })
end
`,
  );
  return file;
}

/** wrk's durations ("812.00us", "3.10ms", "1.20s") in ms. */
function wrkMs(text) {
  const m = /([\d.]+)(us|ms|s)/.exec(text ?? '');
  return m === null ? Number.NaN : Number(m[1]) * { us: 0.001, ms: 1, s: 1000 }[m[2]];
}

function runWrk(url, { seconds, subjects }) {
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${Math.max(1, Math.round(seconds))}s`, '--latency'];
  return new Promise((resolve, reject) =>
    execFile('wrk', [...args, '-s', wrkScript(subjects), url], { encoding: 'utf8' }, (error, out, stderr) => {
      if (error) return reject(new Error(`wrk failed: ${error.message}\n${stderr}`));
      resolve({
        rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN),
        p50Ms: wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1]),
        p99Ms: wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1]),
        requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN),
        non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
        errors: /Socket errors: (.*)/.exec(out)?.[1] ?? null,
      });
    }),
  );
}

let child;
let nextId = 0;
const pending = new Map();
function autocannonChild() {
  if (child === undefined) {
    child = fork(HERE, [], {
      env: { ...process.env, SLUICE_LOAD_CHILD: '1' },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', ({ id, result, error }) => {
      const { resolve, reject } = pending.get(id);
      pending.delete(id);
      if (error) reject(new Error(error));
      else resolve(result);
    });
  }
  return child;
}

/** Load on `url` for `seconds`: requests per second, p50/p99 latency in ms, how many were not 2xx. */
export function load(url, { seconds, subjects }) {
  if (loadTool().name === 'wrk') return runWrk(url, { seconds, subjects });
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    autocannonChild().send({ id, url, seconds, subjects });
  });
}

/** Ends the load generator's process. */
export function stopLoad() {
  child?.kill();
  child = undefined;
}

if (process.env.SLUICE_LOAD_CHILD === '1' && process.argv[1] === HERE) {
  const { default: autocannon } = await import('autocannon');
  process.on('disconnect', () => process.exit(0));
  process.on('message', async ({ id, url, seconds, subjects }) => {
    try {
      let next = 0;
      const r = await autocannon({
        url,
        connections: CONNECTIONS,
        duration: seconds,
        requests: [
          {
            setupRequest(request) {
              request.headers = { ...request.headers, 'x-forwarded-for': clientAddress(next++ % subjects) };
              return request;
            },
          },
        ],
      });
      const requests = r.requests.total;
      const errors = r.errors > 0 ? `${r.errors} errors, ${r.timeouts} timeouts` : null;
      const result = {
        rps: requests / (r.duration || seconds),
        p50Ms: r.latency.p50,
        p99Ms: r.latency.p99,
        requests,
        non2xx: r.non2xx,
        errors,
      };
      process.send({ id, result });
    } catch (error) {
      process.send({ id, error: String(error?.stack ?? error) });
    }
  });
}

/**
 * The load generator, always in its own process: wrk when it is installed (it costs the least CPU
 * per request), autocannon otherwise; SLUICE_BENCH_LOAD=autocannon forces autocannon.
 * `subjects: 1` sends one X-Forwarded-For address; `subjects: n` cycles through n addresses.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const CONNECTIONS = 32;
const AUTOCANNON_CHILD = fileURLToPath(new URL('./autocannon-child.mjs', import.meta.url));

/** 'wrk' or 'autocannon', with the version, for the report. */
export function loadTool() {
  if (process.env.SLUICE_BENCH_LOAD !== 'autocannon') {
    const probe = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
    const version = /wrk (\S+)/.exec(`${probe.stdout}${probe.stderr}`)?.[1];
    if (probe.error === undefined && version !== undefined)
      return { name: 'wrk', version, connections: CONNECTIONS };
  }
  return {
    name: 'autocannon',
    version: require('autocannon/package.json').version,
    connections: CONNECTIONS,
  };
}

/** The address of client `i` of many. */
export function clientAddress(i) {
  return `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
}

let scriptDir;
/** A wrk script that gives each request the next of `n` client addresses. */
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

function run(command, args) {
  return new Promise((resolve, reject) => {
    execFile(command, args, { encoding: 'utf8', maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${command} failed: ${error.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

/** wrk's durations ("812.00us", "3.10ms", "1.20s") in ms. */
function wrkMs(text) {
  const m = /([\d.]+)(us|ms|s)/.exec(text);
  if (m === null) return Number.NaN;
  return Number(m[1]) * { us: 0.001, ms: 1, s: 1000 }[m[2]];
}

async function runWrk(url, { seconds, subjects }) {
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${Math.max(1, Math.round(seconds))}s`, '--latency'];
  if (subjects > 1) args.push('-s', wrkScript(subjects));
  else args.push('-H', `X-Forwarded-For: ${clientAddress(0)}`);
  const out = await run('wrk', [...args, url]);
  const total = Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const errors = /Socket errors: (.*)/.exec(out)?.[1];
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN),
    p50Ms: wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    p99Ms: wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    requests: total,
    non2xx,
    errors: errors ?? null,
  };
}

async function runAutocannon(url, { seconds, subjects }) {
  const out = await run(process.execPath, [
    AUTOCANNON_CHILD,
    JSON.stringify({ url, seconds, subjects, connections: CONNECTIONS }),
  ]);
  return JSON.parse(out);
}

/** Load on `url` for `seconds`: requests per second, p50/p99 latency in ms, and how many were not 2xx. */
export function load(url, options) {
  return loadTool().name === 'wrk' ? runWrk(url, options) : runAutocannon(url, options);
}

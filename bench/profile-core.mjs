/**
 * Where a core decision spends its time: runs one Sluice call shape in a loop under the V8 CPU
 * profiler and prints the functions with the most self time.
 *
 *   node bench/profile-core.mjs [consume|decide] [hot|spread] [algorithm|two] [seconds] [--json]
 *
 * With --json it prints { calls, top: [{ share, fn }] } instead (the core suite embeds it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selfTimes } from './lib/self-time.mjs';

const json = process.argv.includes('--json');
const [api = 'consume', shape = 'hot', algorithm = 'sliding-window', seconds = '3'] = process.argv
  .slice(2)
  .filter((a) => a !== '--json');

if (process.env.SLUICE_PROFILE_CHILD === undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-prof-'));
  const out = execFileSync(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${dir}`, fileURLToPath(import.meta.url), api, shape, algorithm, seconds],
    { encoding: 'utf8', env: { ...process.env, SLUICE_PROFILE_CHILD: '1' } },
  );
  const profile = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), 'utf8'));
  rmSync(dir, { recursive: true });
  const top = selfTime(profile);
  const lines = hotLines(profile);
  if (json) process.stdout.write(JSON.stringify({ calls: out.trim(), top, lines }));
  else {
    process.stdout.write(out);
    for (const { share, fn } of top) console.log(`${(share * 100).toFixed(1).padStart(5)}%  ${fn}`);
    console.log('\nhottest lines:');
    for (const { share, where, code } of lines)
      console.log(`${(share * 100).toFixed(1).padStart(5)}%  ${where}  ${code}`);
  }
} else {
  await loop();
}

async function loop() {
  const { createLimiter } = await import('@sluice/core');
  const { LIMITER_CASES, subjects } = await import('./lib/policies.mjs');
  const chosen = LIMITER_CASES.find((c) => c.label === (algorithm === 'two' ? 'two policies' : algorithm));
  const limiter = createLimiter({ policies: chosen.policies });
  const many = shape === 'hot' ? ['hot-subject'] : subjects(100_000);
  const until = Date.now() + Number(seconds) * 1000;
  let calls = 0;
  let next = 0;
  while (Date.now() < until) {
    for (let i = 0; i < 10_000; i++) {
      const s = many[next];
      if (++next === many.length) next = 0;
      const d = api === 'consume' ? await limiter.consume(s) : limiter.decide(s, 1, 'consume');
      d.release?.();
    }
    calls += 10_000;
  }
  console.log(
    `${api} ${shape} ${algorithm}: ${(calls / Number(seconds) / 1e6).toFixed(2)}M calls/s under the profiler`,
  );
}

/** Self time per function as a share of the profile's time, the top 15 (lib/self-time.mjs). */
function selfTime(profile) {
  const self = selfTimes(profile);
  let total = 0;
  for (const us of self.values()) total += us;
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([fn, us]) => ({ share: us / total, fn }));
}

/** The source lines with the most samples (V8 records ticks per line), with their text. */
function hotLines(profile) {
  const total = profile.samples.length;
  const ticks = new Map();
  for (const node of profile.nodes) {
    const { url } = node.callFrame;
    if (!url.startsWith('file:')) continue;
    for (const { line, ticks: n } of node.positionTicks ?? []) {
      const key = `${url}\u0000${line}`;
      ticks.set(key, (ticks.get(key) ?? 0) + n);
    }
  }
  const sources = new Map();
  return [...ticks]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 12)
    .map(([key, n]) => {
      const [url, line] = key.split('\u0000');
      const file = fileURLToPath(url);
      if (!sources.has(file))
        sources.set(file, existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []);
      const code = (sources.get(file)[Number(line) - 1] ?? '').trim().slice(0, 100);
      return { share: n / total, where: `${file.replace(/^.*\/(packages|bench)\//, '$1/')}:${line}`, code };
    });
}

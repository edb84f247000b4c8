/**
 * Where a core decision spends its time: runs one Sluice call shape in a loop under the V8 CPU
 * profiler and prints the functions with the most self time.
 *
 *   node bench/profile-core.mjs [consume|decide] [hot|spread] [algorithm|two] [seconds]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [api = 'consume', shape = 'hot', algorithm = 'sliding-window', seconds = '3'] = process.argv.slice(2);

if (process.env.SLUICE_PROFILE_CHILD === undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-prof-'));
  execFileSync(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${dir}`, fileURLToPath(import.meta.url), api, shape, algorithm, seconds],
    { stdio: 'inherit', env: { ...process.env, SLUICE_PROFILE_CHILD: '1' } },
  );
  const profile = JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), 'utf8'));
  rmSync(dir, { recursive: true });
  printSelfTime(profile);
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
  console.log(`${api} ${shape} ${algorithm}: ${((calls / Number(seconds)) / 1e6).toFixed(2)}M calls/s (profiled)`);
}

/** Self time per function (name and location), the top 25, as a share of the samples. */
function printSelfTime(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const self = new Map();
  for (const [id, n] of counts) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    const where = url ? `${url.replace(/^.*\/(packages|node_modules)\//, '')}:${lineNumber + 1}` : '';
    const key = `${functionName || '(anonymous)'} ${where}`;
    self.set(key, (self.get(key) ?? 0) + n);
  }
  const total = profile.samples.length;
  for (const [key, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${key}`);
  }
}

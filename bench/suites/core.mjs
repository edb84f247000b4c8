/**
 * Suite 1, core: in-process decisions per second on memory stores. Sluice (every algorithm and a
 * two-policy limiter, through `consume` and through the synchronous `decide`) beside the memory
 * stores of express-rate-limit, rate-limiter-flexible and @fastify/rate-limit, one hot subject and
 * 100,000 subjects round robin. Each case is timed in a fresh process (so no case's JIT state
 * depends on which others ran before it), in interleaved rounds (A B C … A B C …).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { progress, SMOKE, writeResults } from '../lib/cli.mjs';
import { summarize } from '../lib/stats.mjs';
import { coreCases } from './core-cases.mjs';

const settings = SMOKE
  ? { rounds: 1, timeMs: 100, warmupMs: 30, batch: 1000, subjects: 10_000 }
  : { rounds: 3, timeMs: 300, warmupMs: 100, batch: 1000, subjects: 100_000 };
const spreadLabel = `${settings.subjects / 1000}k`;
const CASE = fileURLToPath(new URL('./core-case.mjs', import.meta.url));
const PROFILER = fileURLToPath(new URL('../profile-core.mjs', import.meta.url));

const started = Date.now();
const cases = coreCases(SMOKE);
const perCase = new Map(cases.map((c) => [c.id, []]));
progress(`core: ${cases.length} cases × ${settings.rounds} rounds of ${settings.timeMs} ms, a process each`);
for (let round = 0; round < settings.rounds; round++) {
  for (const c of cases) {
    const out = execFileSync(process.execPath, [CASE, c.id, JSON.stringify(settings)], { encoding: 'utf8' });
    perCase.get(c.id).push(JSON.parse(out).opsPerSec);
  }
  progress(`core: round ${round + 1}/${settings.rounds} done`);
}
const rows = cases.map(({ id, subjects, ...rest }) => ({
  ...rest,
  subjects: subjects === 'hot' ? 'hot' : spreadLabel,
  opsPerSec: summarize(perCase.get(id)),
}));

// Where the time goes, for the report: the target case under the V8 profiler, each in a fresh process.
const profiles = [
  ['consume', 'hot'],
  ['decide', 'spread'],
].map(([api, shape]) => {
  const seconds = SMOKE ? '0.3' : '2';
  const out = execFileSync(process.execPath, [PROFILER, api, shape, 'sliding-window', seconds, '--json'], {
    encoding: 'utf8',
  });
  return { api, subjects: shape === 'hot' ? 'hot' : '100k', ...JSON.parse(out) };
});
progress('core: profiled sliding-window consume (hot) and decide (100k)');

const file = writeResults('core', { settings, durationMs: Date.now() - started, rows, profiles });
progress(`core: wrote ${file}`);

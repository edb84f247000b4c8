/** V8 CPU profiles taken in process, read as self time per function (inlined callees count in their callers). */
import { Session } from 'node:inspector/promises';

/** Runs `fn` under the V8 profiler (sampling every 100 µs); resolves to the profile. */
export async function profiled(fn) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  await fn();
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  return profile;
}

/** `name file:line`, the path from packages/, bench/ or the package's folder; native frames have no file. */
function label({ functionName, url, lineNumber }) {
  const where = url
    .replace(/^.*\/node_modules\/\.pnpm\/([^/]+)\/node_modules\/[^/]+\//, '$1/')
    .replace(/^.*\/(packages|node_modules|bench)\//, '$1/');
  return `${functionName || '(anonymous)'}${where ? ` ${where}:${lineNumber + 1}` : ''}`;
}

/** µs of self time per function, idle time left out (timeDeltas[i] is the gap before sample i). */
export function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const self = new Map();
  profile.samples.forEach((id, i) => {
    const key = label(byId.get(id));
    self.set(key, (self.get(key) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  });
  self.delete('(idle)');
  return self;
}

/** The `n` functions with the most self time, with their share of the busy time. */
export function topFunctions(profile, n = 15) {
  const self = [...selfTimes(profile)].sort((a, b) => b[1] - a[1]);
  const total = self.reduce((sum, [, us]) => sum + us, 0);
  return self.slice(0, n).map(([fn, us]) => `${((us / total) * 100).toFixed(1).padStart(5)}%  ${fn}`);
}

/**
 * Self time per function in a V8 CPU profile, keyed `name file:line` with the path from packages/,
 * bench/ or the package's own folder (`express@5.3.0/…` for a pnpm-installed one); native frames
 * have no file. V8 inlines small functions into their callers, so a caller's time includes theirs.
 */
function label({ functionName, url, lineNumber }) {
  const where = url
    .replace(/^.*\/node_modules\/\.pnpm\/([^/]+)\/node_modules\/[^/]+\//, '$1/')
    .replace(/^.*\/(packages|node_modules|bench)\//, '$1/');
  return `${functionName || '(anonymous)'}${where ? ` ${where}:${lineNumber + 1}` : ''}`;
}

/**
 * µs of self time per function, idle time under '(idle)'. A sample lasts until the next one is taken
 * (timeDeltas[i] is the gap before sample i: the first one's is the wait from the profile's start).
 */
export function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const { samples, timeDeltas } = profile;
  let last = profile.startTime;
  for (const delta of timeDeltas) last += delta;
  const self = new Map();
  samples.forEach((id, i) => {
    const key = label(byId.get(id));
    const us = i + 1 < samples.length ? timeDeltas[i + 1] : profile.endTime - last;
    self.set(key, (self.get(key) ?? 0) + us);
  });
  return self;
}

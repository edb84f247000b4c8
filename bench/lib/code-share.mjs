/**
 * The share of a process's busy CPU time spent in one package's code, from a V8 CPU profile: samples
 * whose function comes from a file under one of `roots` (self time only: the garbage collector and
 * the kernel's work for the bytes that code adds are not counted). Idle samples, and those of the first
 * `skipMs` of the profile (start-up and warm-up), are left out.
 */
export function codeShare(profile, roots, skipMs = 0) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  let busy = 0;
  let ours = 0;
  let elapsedUs = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    elapsedUs += delta;
    if (elapsedUs < skipMs * 1000) return;
    const { functionName, url } = byId.get(id).callFrame;
    if (functionName === '(idle)') return;
    busy += delta;
    if (roots.some((root) => url.includes(root))) ours += delta;
  });
  return busy === 0 ? 0 : ours / busy;
}

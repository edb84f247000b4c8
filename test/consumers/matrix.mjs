/**
 * The dependency sets a consumer installs beside the packed tarballs, derived from the peer ranges the
 * tarballs declare, so the check follows the declaration: 'low' takes the lowest version each range
 * admits, 'high' the newest release of its highest major.
 */

/** Type packages for frameworks that ship none, by the framework's major. */
const TYPES_FOR = { express: (major) => ({ '@types/express': `^${major}` }) };

/** Comparator sets of a range such as '^4.17.0 || ^5.0.0' or '>=5.0.0', as [operator, version]. */
function comparators(range) {
  return range.split('||').map((part) => {
    const match = /^\s*(\^|~|>=)?\s*(\d+)\.(\d+)\.(\d+)\s*$/.exec(part);
    if (!match) throw new Error(`peer range "${range}" has a form this check does not read: ${part.trim()}`);
    return { op: match[1] ?? '', version: [Number(match[2]), Number(match[3]), Number(match[4])] };
  });
}

function compare(a, b) {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** The lowest exact version a range admits, and a spec for the newest release it admits. */
export function ends(range) {
  const sets = comparators(range).sort((a, b) => compare(a.version, b.version));
  const lowest = sets[0].version.join('.');
  const top = sets[sets.length - 1];
  const high = top.op === '' ? top.version.join('.') : `${top.op}${top.version.join('.')}`;
  return { low: lowest, high };
}

function major(spec) {
  return Number(/\d+/.exec(spec)[0]);
}

/**
 * The two dependency sets for the peers of the given package.json files (as read from the tarballs).
 * A peer declared by several packages must agree; the check fails loudly otherwise.
 */
export function matrix(manifests) {
  const ranges = new Map();
  for (const manifest of manifests) {
    for (const [name, range] of Object.entries(manifest.peerDependencies ?? {})) {
      if (ranges.has(name) && ranges.get(name) !== range) {
        throw new Error(
          `peer ${name} is declared as "${ranges.get(name)}" and "${range}" by different packages`,
        );
      }
      ranges.set(name, range);
    }
  }
  const sets = { low: {}, high: {} };
  for (const [name, range] of ranges) {
    const versions = ends(range);
    for (const end of ['low', 'high']) {
      sets[end][name] = versions[end];
      Object.assign(sets[end], TYPES_FOR[name]?.(major(versions[end])));
    }
  }
  return { ranges: Object.fromEntries(ranges), sets };
}

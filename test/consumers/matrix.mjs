/**
 * The dependency sets a consumer installs beside the packed tarballs, derived from the peer ranges the
 * tarballs declare, so the check follows the declaration: 'low' takes the lowest version each range
 * admits, 'high' the newest release of its highest major.
 */

/** What a consumer installs beside a peer: type packages for frameworks that ship none, by the framework's major; Hono's Node server; Nest's platform. */
const TYPES_FOR = {
  express: (major) => ({ '@types/express': `^${major}` }),
  koa: (major) => ({ '@types/koa': `^${major}` }),
  // Not a peer (Hono runs elsewhere too), but what the consumer serves Hono with: its 1.x and 2.x.
  hono: (_major, end) => ({ '@hono/node-server': end === 'low' ? '~1.19.0' : '^2.0.0' }),
  // What a Nest app has beside its core: a platform, and the peers Nest 10.0 and 11 each take.
  '@nestjs/core': (major, end) => ({
    '@nestjs/platform-express': end === 'low' ? `${major}.0.0` : `^${major}.0.0`,
    'reflect-metadata': end === 'low' ? '^0.1.12' : '^0.2.0',
    rxjs: '^7.1.0',
  }),
};

/**
 * The TypeScript compilers the consumer type-checks with beside the repository's own (5.9, which
 * checks node10): the oldest the README promises, and 7, the native compiler (it has no
 * node10 resolution). Each is installed into the consumer under an alias, as a user would have it.
 */
export const TYPESCRIPT = [
  { alias: 'typescript-5.4', spec: '~5.4.5' },
  { alias: 'typescript-7', spec: '^7.0.2' },
];

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
      Object.assign(sets[end], TYPES_FOR[name]?.(major(versions[end]), end));
    }
  }
  for (const end of ['low', 'high']) {
    for (const { alias, spec } of TYPESCRIPT) sets[end][alias] = `npm:typescript@${spec}`;
  }
  return { ranges: Object.fromEntries(ranges), sets };
}

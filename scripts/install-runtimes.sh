#!/usr/bin/env bash
# The runtimes test/runtimes runs Sluice in besides Node: workerd (through miniflare), Vercel's Edge
# Runtime, Deno and Bun, each a pinned npm package with its binary inside (about 400 MB together), so
# they come from the npm registry like everything else. Installed once into .cache/runtimes (gitignored)
# and only for the tests that need them: the README's `pnpm install && pnpm demo` never fetches them.
#
#   scripts/install-runtimes.sh          installs (if missing) and prints the directory
set -euo pipefail
dir="$(cd "$(dirname "$0")/.." && pwd)/.cache/runtimes"
# miniflare 3 runs on Node 20 (miniflare 4 needs Node 22); its workerd comes with it.
packages=(
  miniflare@3.20250718.3
  edge-runtime@4.0.1
  deno@2.5.7
  bun@1.4.5
)
stamp="$dir/installed"
# Two test files may ask at once (Jest's workers): one installs, the other waits for it.
mkdir -p "$(dirname "$dir")"
exec 9>"$dir.lock"
flock 9
if [[ "$(cat "$stamp" 2>/dev/null)" != "${packages[*]}" ]]; then
  rm -rf "$dir"
  mkdir -p "$dir"
  echo '{"name":"sluice-runtimes","private":true}' >"$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "${packages[@]}" >&2
  "$dir/node_modules/.bin/deno" --version >/dev/null
  "$dir/node_modules/.bin/bun" --version >/dev/null
  echo "${packages[*]}" >"$stamp"
fi
echo "$dir"

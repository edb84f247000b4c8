#!/usr/bin/env bash
# The README's test command: every test, against real redis-server processes that the tests start.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "test: redis-server is missing; installing the Debian package redis-server"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  else
    echo "test: redis-server is missing. Install it first:  sudo apt-get install -y redis-server" >&2
    exit 1
  fi
fi
# PostgreSQL and pgbouncer for the Postgres suites, installed the same way when missing and root.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then bash scripts/install-postgres.sh; fi
out=$(mktemp)
status=0
# pnpm's shim runs Jest (and so its workers) on the node first on PATH, where CI puts Node 22, 24 or 26
# through scripts/node.sh; the shim, not jest.js itself, because it also sets the NODE_PATH of pnpm's
# hoisted modules, through which test/adapters/nest10.test.ts finds @nestjs/common.
# Two workers for two cores; SLUICE_TEST_WORKERS=3 (CI's full runs) keeps both cores busy while one
# worker waits on a store's timeout, a pause or a restart.
node_modules/.bin/jest --maxWorkers="${SLUICE_TEST_WORKERS:-2}" --json --outputFile="$out" "$@" || status=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
' "$out" || true
rm -f "$out"
# A worker that Jest had to kill cannot stop its server: end any test server left without a parent
# (a PostgreSQL test server's data dir is under a sluice-pg- temp dir).
for pid in $(pgrep -x postgres || true); do
  if [ "$(ps -o ppid= -p "$pid" | tr -d ' ')" = 1 ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q '/sluice-pg-'; then
    kill -9 "$pid" 2>/dev/null || true
  fi
done
for pid in $(pgrep -x "${SLUICE_REDIS_SERVER:-redis-server}" || true); do
  if [ "$(ps -o ppid= -p "$pid" | tr -d ' ')" = 1 ] && readlink "/proc/$pid/cwd" | grep -q '/sluice-redis-'; then
    kill "$pid" 2>/dev/null || true
  fi
done
exit "$status"

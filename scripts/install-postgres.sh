#!/usr/bin/env bash
# PostgreSQL (15 or later: Debian 12's postgresql is 15) and pgbouncer for the Postgres suites
# (test/support/postgres.ts starts its own servers; the packages' services are not used). Idempotent
# and quiet; as root, through apt-get. Debian starts the packages' own cluster and pgbouncer when it
# installs them: they are stopped again, so nothing of theirs listens.
set -euo pipefail
missing=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v pgbouncer >/dev/null || missing+=(pgbouncer)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "install-postgres: run as root to install ${missing[*]} (sudo bash scripts/install-postgres.sh)" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
for service in postgresql pgbouncer; do service "$service" stop >/dev/null 2>&1 || true; done

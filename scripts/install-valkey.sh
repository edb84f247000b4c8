#!/usr/bin/env bash
# Valkey 8 for the second pass of the Redis suites. Debian 12 (bookworm) has no valkey-server; its
# backports suite has 8.0. The backports suite is added on the machine's own Debian mirror, the one
# apt already reaches (CI machines reach no other download site).
set -euo pipefail
if command -v valkey-server >/dev/null && command -v valkey-cli >/dev/null; then exit 0; fi
. /etc/os-release
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(awk -v s="$VERSION_CODENAME" '$1 == "deb" && $3 == s { print $2; exit }' /etc/apt/sources.list)
[ -n "$mirror" ] || { echo "install-valkey: no Debian mirror in /etc/apt" >&2; exit 1; }
echo "deb $mirror $VERSION_CODENAME-backports main" >/etc/apt/sources.list.d/sluice-backports.list
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t "$VERSION_CODENAME-backports" valkey-server >/dev/null

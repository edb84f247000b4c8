// What starting a throwaway PostgreSQL server takes, shared by the tests (test/support/postgres.ts) and
// the benchmark (bench/lib/postgres.mjs): CommonJS, so that Jest requires it as is and Node's ESM
// imports it. Debian's packages: initdb refuses root, so the server runs as the `postgres` user.
const { execFileSync, spawnSync } = require('node:child_process');
const { existsSync, readdirSync } = require('node:fs');
const { join } = require('node:path');

/** The newest PostgreSQL 15+ binaries installed (Debian keeps each major under /usr/lib/postgresql). */
function binDir() {
  if (process.env.SLUICE_PG_BIN) return process.env.SLUICE_PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .map(Number)
    .filter((v) => v >= 15)
    .sort((a, b) => b - a);
  return majors.length === 0 ? undefined : join(root, String(majors[0]), 'bin');
}

/** The `postgres` user's uid and gid, for spawn. */
function postgresUser() {
  const id = (flag) => Number(execFileSync('id', [flag, 'postgres']).toString());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * Signals a server and every process it started: PostgreSQL's backends each call setsid(), so they
 * are in no process group of the postmaster's, only its children.
 */
function signalAll(pid, signal) {
  const pids = [pid];
  const listed = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  for (const p of listed.stdout?.split('\n') ?? []) if (p.trim() !== '') pids.push(Number(p));
  for (const p of pids) {
    try {
      process.kill(p, signal);
    } catch {}
  }
}

/** A fresh cluster in `dir`/data (`dir` owned by the postgres user); returns the data dir. */
function initCluster(bin, dir) {
  const data = join(dir, 'data');
  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
    { ...postgresUser(), encoding: 'utf8' },
  );
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  return data;
}

/**
 * The postgres arguments for a server on `port` of loopback, its socket in `dir`, without durability
 * (nothing measures the disk), then `settings` as `-c name=value`.
 */
function serverArgs(data, dir, port, settings = {}) {
  const all = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    max_connections: 200,
    ...settings,
  };
  return ['-D', data, '-p', String(port), ...Object.entries(all).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
}

module.exports = { binDir, postgresUser, signalAll, initCluster, serverArgs };

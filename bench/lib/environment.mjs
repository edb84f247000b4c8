import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { BENCH_DIR, ROOT_DIR } from './cli.mjs';

const PACKAGES = [
  '@sluice/core',
  '@sluice/express',
  '@sluice/fastify',
  'express-rate-limit',
  'rate-limit-redis',
  'rate-limiter-flexible',
  '@fastify/rate-limit',
  'express',
  'fastify',
  'ioredis',
  'tinybench',
  'autocannon',
];

function version(name) {
  try {
    return JSON.parse(readFileSync(join(BENCH_DIR, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return 'not installed';
  }
}

function commandOutput(command, args) {
  try {
    return execFileSync(command, args, {
      encoding: 'utf8',
      cwd: ROOT_DIR,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

/** The machine and software a run measured: CPU, memory, OS, Node, Redis, packages, commit. */
export function environment() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    redis: /v=(\S+)/.exec(commandOutput('redis-server', ['--version']) ?? '')?.[1] ?? 'not installed',
    packages: Object.fromEntries(PACKAGES.map((name) => [name, version(name)])),
    commit: commandOutput('git', ['rev-parse', '--short', 'HEAD']) ?? 'unknown',
    dirty: (commandOutput('git', ['status', '--porcelain']) ?? '') !== '',
    loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

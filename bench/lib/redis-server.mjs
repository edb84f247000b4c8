import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import Redis from 'ioredis';

/** A free loopback port, found by letting the kernel pick one. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * A redis-server of the suite's own on a free loopback port: no persistence, nothing shared with a
 * developer's Redis. `stop()` ends it.
 */
export async function startRedis() {
  if (spawnSync('redis-server', ['--version']).error !== undefined) {
    throw new Error(
      'redis-server is not installed; this suite needs it (Debian: apt-get install -y redis-server)',
    );
  }
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null });
  probe.on('error', () => {});
  for (let attempt = 0; ; attempt++) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch (error) {
      if (attempt > 200 || child.exitCode !== null) {
        child.kill();
        throw new Error(`redis-server did not start on port ${port}: ${error.message}\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const info = await probe.info('server');
  const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
  probe.disconnect();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    version,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/** Redis CPU seconds (user + sys) and used memory, from INFO. */
export async function redisUsage(client) {
  const cpu = await client.info('cpu');
  const memory = await client.info('memory');
  const read = (text, field) => Number(new RegExp(`${field}:([\\d.]+)`).exec(text)?.[1] ?? Number.NaN);
  return {
    cpuSeconds: read(cpu, 'used_cpu_sys') + read(cpu, 'used_cpu_user'),
    usedMemory: read(memory, 'used_memory'),
  };
}

import { createServer } from 'node:net';

/**
 * A loopback port nobody listens on (a server of the caller's own takes it): for the plain .mjs
 * scripts (the benchmark, the packaging check); the tests have test/support/redis.ts's.
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

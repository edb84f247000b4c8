/**
 * What the HTTP servers limit: /allowed never reaches its limit, /denied allows one request per
 * subject an hour and answers every later one with 429. The subject is the client address, read
 * from X-Forwarded-For (trust proxy on, so the load generator can play many clients).
 */
import { UNREACHED } from '../lib/policies.mjs';

export const ROUTES = {
  allowed: { limit: UNREACHED, windowMs: 60_000 },
  denied: { limit: 1, windowMs: 3_600_000 },
};

export const HELLO = 'hello world';

/** The server's configuration from its argv: the limiter kind and, for Redis ones, the port. */
export function serverArgs() {
  const [kind = 'bare', redisPort] = process.argv.slice(2);
  // The control is the bare app once more, measured as a limited one is: the method's own error.
  return {
    kind: kind === 'control' ? 'bare' : kind,
    redisPort: redisPort === undefined ? undefined : Number(redisPort),
  };
}

/**
 * Tells the parent which port the server listens on; an 'exit' message from it ends the process
 * normally (so a CPU profile is written).
 */
export function announce(port) {
  process.send?.({ type: 'listening', port });
  process.on('message', (m) => {
    if (m === 'exit') process.exit(0);
  });
}

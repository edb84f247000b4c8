/**
 * A separate process for the atomicity test (run through test/support/ts-register.cjs by fork): told
 * over IPC which Redis to use, then, per message, fires `calls` concurrent consumes for one subject
 * and answers with what it was told.
 */
import { createLimiter, type Policy, type RedisClient, RedisStore } from '@sluice/core';
import { type ClientName, closeClients, connectClient, type Target } from './clients.js';

export interface Burst {
  policies: Policy[];
  prefix: string;
  subject: string;
  calls: number;
}

export interface BurstResult {
  allowed: number;
  denied: number;
  /** Decided without the store (a timeout or error): must stay 0. */
  degraded: number;
  errors: string[];
}

let client: RedisClient | undefined;

async function burst({ policies, prefix, subject, calls }: Burst): Promise<BurstResult> {
  const limiter = createLimiter({
    policies,
    prefix,
    store: new RedisStore({ client: client! }),
    // A late answer must show as a failure of the test, never as a quiet local decision.
    onStoreError: 'deny',
    storeTimeout: '30s',
  });
  const result: BurstResult = { allowed: 0, denied: 0, degraded: 0, errors: [] };
  await Promise.all(
    Array.from({ length: calls }, () =>
      limiter.consume(subject).then(
        (d) => {
          if (d.degraded) result.degraded++;
          else if (d.allowed) result.allowed++;
          else result.denied++;
        },
        (error: unknown) => result.errors.push(String(error)),
      ),
    ),
  );
  return result;
}

process.on('message', (message: { target?: Target; client?: ClientName; burst?: Burst; quit?: true }) => {
  if (message.target !== undefined) {
    connectClient(message.client!, message.target, { autoPipelining: true }).then((connected) => {
      client = connected;
      process.send!({ ready: true });
    });
  } else if (message.burst !== undefined) {
    burst(message.burst).then((result) => process.send!({ result }));
  } else if (message.quit) {
    closeClients().then(() => process.disconnect());
  }
});
// The test process is gone (ended, or killed): so is the reason to live.
process.once('disconnect', () => process.exit());

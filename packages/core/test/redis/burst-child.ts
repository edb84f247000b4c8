/**
 * A separate process for the atomicity test (run through test/support/ts-register.cjs by fork): told
 * over IPC which Redis and which client to use, then, per message, fires a burst (the test kit's
 * fireBurst: `calls` concurrent consumes for one subject) and answers with what it got.
 */
import { type RedisClient, RedisStore } from '@sluice/core';
import { type Burst, fireBurst } from '@sluice/core/testing';
import { type ClientName, closeClients, connectClient, type Target } from './clients.js';

let client: RedisClient | undefined;

process.on('message', (message: { target?: Target; client?: ClientName; burst?: Burst; quit?: true }) => {
  if (message.target !== undefined) {
    connectClient(message.client!, message.target, { autoPipelining: true }).then((connected) => {
      client = connected;
      process.send!({ ready: true });
    });
  } else if (message.burst !== undefined) {
    fireBurst(new RedisStore({ client: client! }), message.burst).then((result) => process.send!({ result }));
  } else if (message.quit) {
    closeClients().then(() => process.disconnect());
  }
});
// The test process is gone (ended, or killed): so is the reason to live.
process.once('disconnect', () => process.exit());

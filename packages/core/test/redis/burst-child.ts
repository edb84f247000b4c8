/**
 * A separate process for the atomicity test (run through test/support/ts-register.cjs by fork): says
 * it is ready once loaded, then, per message, fires a burst (the test kit's fireBurst: `calls`
 * concurrent consumes for one subject) on the Redis and client the message names, and answers with
 * what it got. Clients are kept for the next burst on the same pair: one process serves every run
 * of the test, since loading this process (compiling the sources) costs far more than a burst.
 */
import { type RedisClient, RedisStore } from '@sluice/core';
import { type Burst, fireBurst } from '@sluice/core/testing';
import { type ClientName, closeClients, connectClient, type Target } from './clients.js';

export type BurstMessage = { target: Target; client: ClientName; burst: Burst } | { quit: true };

const clients = new Map<string, Promise<RedisClient>>();

function clientFor(name: ClientName, target: Target): Promise<RedisClient> {
  const key = `${name} ${JSON.stringify(target)}`;
  let client = clients.get(key);
  if (client === undefined) {
    client = connectClient(name, target, { autoPipelining: true });
    clients.set(key, client);
  }
  return client;
}

process.on('message', (message: BurstMessage) => {
  if ('quit' in message) {
    closeClients().then(() => process.disconnect());
    return;
  }
  clientFor(message.client, message.target)
    .then((client) => fireBurst(new RedisStore({ client }), message.burst))
    .then((result) => process.send!({ result }));
});
process.send!({ ready: true });
// The test process is gone (ended, or killed): so is the reason to live.
process.once('disconnect', () => process.exit());

/**
 * A separate process for the Postgres concurrency tests (forked through test/support/ts-register.cjs):
 * told over IPC which server and client to use (a pool of `max` connections), then per message fires
 * a burst (the kit's fireBurst) or crosses keys for a while (crossing.ts), and answers with the result.
 */
import { type PostgresClient, PostgresStore } from '@sluice/core';
import { type Burst, fireBurst } from '@sluice/core/testing';
import { closeClients, makeClient, type PgClientName } from './clients.js';
import { type Crossing, crossKeys } from './crossing.js';

let client: PostgresClient | undefined;

interface Message {
  url?: string;
  client?: PgClientName;
  max?: number;
  burst?: Burst;
  crossing?: Crossing;
  quit?: true;
}

process.on('message', (message: Message) => {
  if (message.url !== undefined) {
    makeClient(message.client!, message.url, { max: message.max }).then((made) => {
      client = made;
      process.send!({ ready: true });
    });
  } else if (message.burst !== undefined) {
    fireBurst(new PostgresStore({ client: client! }), message.burst).then((result) =>
      process.send!({ result }),
    );
  } else if (message.crossing !== undefined) {
    crossKeys(new PostgresStore({ client: client! }), message.crossing).then((result) =>
      process.send!({ result }),
    );
  } else if (message.quit) {
    closeClients().then(() => process.disconnect());
  }
});
process.once('disconnect', () => process.exit());

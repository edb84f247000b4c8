import { ErrorCodes } from '../../../errors.js';
import { clientWarning } from '../../client-warning.js';
import type { SqlRunner } from './runner.js';

/** What PostgresStore uses of a `pg` Pool or Client: query(text), and its 'error' event. */
export interface PgQueryable {
  query(
    text: string,
  ): Promise<{ rows: Array<Record<string, unknown>> } | Array<{ rows: Array<Record<string, unknown>> }>>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  listenerCount?(event: string): number;
}

/**
 * A `pg` Pool (idleCount, totalCount) or Client (connectionParameters); a pg-pool's PoolClient is a
 * Client. Not postgres.js, whose instance is a function.
 */
export function isPg(client: unknown): client is PgQueryable {
  if (typeof client !== 'object' || client === null) return false;
  const shape = client as Record<string, unknown>;
  return (
    typeof shape.query === 'function' &&
    typeof shape.on === 'function' &&
    ('totalCount' in shape || 'connectionParameters' in shape)
  );
}

function noop(): void {}

/**
 * A pg Client on which connect() was never called (pg 8's own flags; a Pool, and a Client connecting,
 * connected, ended or failed, read otherwise): pg holds its queries until connect(), so every call
 * would wait out its time and the app would see timeouts and nothing else.
 */
function neverConnected(client: PgQueryable): boolean {
  const flags = client as unknown as Record<string, unknown>;
  return (
    flags._connecting === false &&
    flags._connected === false &&
    flags._ending === false &&
    flags._queryable === true
  );
}

const NEVER_CONNECTED =
  "PostgresStore: its pg Client was never connected (connect() not called) at the store's first call: pg holds every query until it is, so the store's calls are decided by onStoreError (the local fallback by default), not by PostgreSQL. Fix: await client.connect() before serving, or give the store a pg Pool, which connects by itself.";

type PgResult = Awaited<ReturnType<PgQueryable['query']>>;

/**
 * client.query, one statement at a time on a Client: a Client runs one anyway, and pg 8.23 warns of a
 * query() made while another waits in its queue (DeprecationWarning; the queue goes in pg 9), which
 * overlapping batches did. A Pool (totalCount) gives each statement a connection of its own: unchanged.
 */
function serialQuery(client: PgQueryable): (text: string) => Promise<PgResult> {
  if ('totalCount' in client) return (text) => client.query(text);
  let last: Promise<unknown> = Promise.resolve();
  return (text) => {
    const result = last.then(() => client.query(text));
    last = result.catch(noop);
    return result;
  };
}

export function pgRunner(client: PgQueryable): SqlRunner {
  // pg emits 'error' on a Pool for an idle connection the server dropped, and on a Client for its
  // connection lost: with no listener, Node ends the process. The store's calls see the failure in
  // their own rejections, so a listener that does nothing keeps a dead server from crashing the app.
  if ((client.listenerCount?.('error') ?? 0) === 0) client.on('error', noop);
  const warn = clientWarning(client, ErrorCodes.NOT_CONNECTED, () => NEVER_CONNECTED);
  const query = serialQuery(client);
  return {
    notReady() {
      if (!neverConnected(client)) return undefined;
      warn();
      return NEVER_CONNECTED;
    },
    async run(text) {
      // No values: pg sends the simple query protocol (no statement is prepared, no name is kept).
      const result = await query(text);
      const last = Array.isArray(result) ? result[result.length - 1] : result;
      const value = last?.rows?.[0]?.r;
      return value === undefined || value === null ? null : String(value);
    },
  };
}

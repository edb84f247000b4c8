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

export function pgRunner(client: PgQueryable): SqlRunner {
  // pg emits 'error' on a Pool for an idle connection the server dropped, and on a Client for its
  // connection lost: with no listener, Node ends the process. The store's calls see the failure in
  // their own rejections, so a listener that does nothing keeps a dead server from crashing the app.
  if ((client.listenerCount?.('error') ?? 0) === 0) client.on('error', noop);
  return {
    async run(text) {
      // No values: pg sends the simple query protocol (no statement is prepared, no name is kept).
      const result = await client.query(text);
      const last = Array.isArray(result) ? result[result.length - 1] : result;
      const value = last?.rows?.[0]?.r;
      return value === undefined || value === null ? null : String(value);
    },
  };
}

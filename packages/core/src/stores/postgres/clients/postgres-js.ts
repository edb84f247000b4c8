import type { SqlRunner } from './runner.js';

/** What PostgresStore uses of a postgres.js instance (`postgres(url)`): unsafe(text). */
export interface PostgresJsSql {
  (...args: never[]): unknown;
  unsafe(text: string): PromiseLike<ArrayLike<Record<string, unknown>>>;
  begin: unknown;
}

/** postgres.js hands out a tagged-template function with `unsafe`, `begin` and `end` on it. */
export function isPostgresJs(client: unknown): client is PostgresJsSql {
  if (typeof client !== 'function') return false;
  const shape = client as unknown as Record<string, unknown>;
  return (
    typeof shape.unsafe === 'function' && typeof shape.begin === 'function' && typeof shape.end === 'function'
  );
}

export function postgresJsRunner(sql: PostgresJsSql): SqlRunner {
  return {
    async run(text) {
      // unsafe without parameters is the simple query protocol: one round trip, nothing prepared
      // (with parameters, postgres.js describes the statement first: a second round trip). One
      // statement, never sql.begin: postgres.js may crash the process when a connection dies inside
      // a begin (porsager/postgres #1208).
      const rows = await sql.unsafe(text);
      const value = rows[0]?.r;
      return value === undefined || value === null ? null : String(value);
    },
  };
}

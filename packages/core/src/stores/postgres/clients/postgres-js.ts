import type { SqlRunner } from './runner.js';

/** What PostgresStore uses of a postgres.js instance (`postgres(url)`): unsafe(text).values(). */
export interface PostgresJsSql {
  (...args: never[]): unknown;
  unsafe(text: string): { values(): PromiseLike<ArrayLike<ArrayLike<unknown>>> };
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
      // Rows as arrays, read by position: the app's `transform` (postgres.camel, pascal, a column
      // function) renames columns, and `r` read by name was undefined under any of them.
      const rows = await sql.unsafe(text).values();
      const value = rows[0]?.[0];
      return value === undefined || value === null ? null : String(value);
    },
  };
}

/**
 * Values written into the SQL text of a call. The store sends no parameters: postgres.js would
 * describe a parameterized statement in a round trip of its own, and the simple query protocol keeps
 * every client on one round trip with nothing prepared. So every value is quoted here, and only here.
 */

/**
 * A string literal that means `value` whatever standard_conforming_strings says: the E'' form, where a
 * backslash always escapes, with backslashes and quotes escaped.
 */
export function textLiteral(value: string): string {
  if (value.includes('\0'))
    throw new Error('sluice: a key with a NUL character cannot be stored in PostgreSQL');
  return `E'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** A text[] literal: every element double-quoted, its backslashes and double quotes escaped. */
export function textArray(values: readonly string[]): string {
  const elements = values.map((v) => `"${v.replace(/[\\"]/g, '\\$&')}"`);
  return `${textLiteral(`{${elements.join(',')}}`)}::text[]`;
}

/** A bigint[] of integers (undefined: NULL); anything but a safe integer is refused, never written. */
export function bigintArray(values: ReadonlyArray<number | undefined>): string {
  const elements = values.map((v) => {
    if (v === undefined) return 'NULL';
    if (!Number.isSafeInteger(v)) throw new Error(`sluice: ${v} is not an integer PostgresStore can store`);
    return String(v);
  });
  return `ARRAY[${elements.join(',')}]::bigint[]`;
}

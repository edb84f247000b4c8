/**
 * Values written into the SQL text of a call. The store sends no parameters: postgres.js would
 * describe a parameterized statement in a round trip of its own, and the simple query protocol keeps
 * every client on one round trip with nothing prepared. So every value is quoted here, and only here.
 *
 * Arrays are built from elements made per call (textElements, bigintElements), so that a value no
 * literal can hold fails its own call when it is made, never the batch it would have joined.
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

/** Elements of a text[] literal: each double-quoted, its backslashes and double quotes escaped. */
export function textElements(values: readonly string[]): string[] {
  return values.map((v) => {
    if (v.includes('\0'))
      throw new Error('sluice: a key with a NUL character cannot be stored in PostgreSQL');
    return `"${v.replace(/[\\"]/g, '\\$&')}"`;
  });
}

/** A text[] literal of elements from textElements. */
export function textArrayOf(elements: readonly string[]): string {
  return `${textLiteral(`{${elements.join(',')}}`)}::text[]`;
}

/** A text[] literal. */
export function textArray(values: readonly string[]): string {
  return textArrayOf(textElements(values));
}

/** Elements of a bigint[] (undefined: NULL); anything but a safe integer is refused, never written. */
export function bigintElements(values: ReadonlyArray<number | undefined>): string[] {
  return values.map((v) => {
    if (v === undefined) return 'NULL';
    if (!Number.isSafeInteger(v)) throw new Error(`sluice: ${v} is not an integer PostgresStore can store`);
    return String(v);
  });
}

/**
 * A bigint[] of elements from bigintElements (or int[], with `type`): one literal, which the server
 * reads as one constant (an ARRAY[...] of as many constants cost it a parse and a fold of each).
 */
export function bigintArrayOf(elements: readonly string[], type = 'bigint[]'): string {
  return `'{${elements.join(',')}}'::${type}`;
}

/** A bigint[] of integers (undefined: NULL). */
export function bigintArray(values: ReadonlyArray<number | undefined>): string {
  return bigintArrayOf(bigintElements(values));
}

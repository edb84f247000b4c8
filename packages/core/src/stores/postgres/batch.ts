import { bigintArrayOf, textArrayOf } from './sql-literals.js';

/**
 * The calls a PostgresStore receives in one turn of the event loop, as the one statement that decides
 * them (call.sql's argument layout) and its reply split back into theirs.
 */

/**
 * A batch is sent as soon as it holds this many calls, the rest at the end of the turn. One statement
 * then holds one connection for a burst instead of a connection per call (a pool of 4 drained by 200
 * calls left most of them to time out waiting), while its text stays small (about 100 bytes a call)
 * and its rows are not held long (a burst of 200, one statement, was answered in 40 to 110 ms end to
 * end on a loaded 2-core test machine). At 64, that burst took 4 statements, the pool opened 3 more
 * connections, and 8 of its calls overran the default 250 ms storeTimeout there.
 */
export const MAX_BATCH_CALLS = 256;

/** A call waiting for its batch: its part of each array the call function takes, as elements. */
export interface Queued {
  readonly op: 'c' | 'p' | 'r' | 'd';
  readonly keys: readonly string[];
  readonly codes: readonly string[];
  readonly nums: readonly string[];
  readonly args: readonly string[];
  /** The function's reply to this call ('' for a refund or reset). */
  resolve(reply: string): void;
  reject(error: unknown): void;
}

/** The SELECT deciding `calls` in order: each array of every call, then how many elements each has. */
export function batchSql(callName: string, calls: readonly Queued[]): string {
  const counts = (of: (call: Queued) => readonly unknown[]) =>
    bigintArrayOf(
      calls.map((call) => String(of(call).length)),
      'int[]',
    );
  const args = [
    textArrayOf(calls.map((call) => call.op)),
    textArrayOf(calls.flatMap((call) => call.keys)),
    counts((call) => call.keys),
    textArrayOf(calls.flatMap((call) => call.codes)),
    bigintArrayOf(calls.flatMap((call) => call.nums)),
    counts((call) => call.codes),
    bigintArrayOf(calls.flatMap((call) => call.args)),
    counts((call) => call.args),
  ];
  return `SELECT ${callName}(${args.join(', ')}) AS r`;
}

/** Gives each call its reply (the function joins them with ';'), or all of them the same error. */
export function settle(calls: readonly Queued[], reply: string | null): void {
  const parts = (reply ?? '').split(';');
  if (parts.length !== calls.length) {
    const error = new Error(
      `sluice: unexpected reply from the PostgresStore function: ${JSON.stringify(reply?.slice(0, 200))}`,
    );
    for (const call of calls) call.reject(error);
    return;
  }
  for (let i = 0; i < calls.length; i++) calls[i]!.resolve(parts[i]!);
}

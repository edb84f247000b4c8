import helpers from '../../algorithms/algorithm.sql';
import { algorithms } from '../../algorithms/index.js';
import call from './call.sql';
import { SQL_TWINS } from './twins.js';

/**
 * What PostgresStore creates in the database, assembled from the algorithms' SQL twins as script.ts
 * assembles the Lua: the twins' functions, a dispatcher by algorithm code, the table, and the function
 * a batch of calls runs (call.sql) with the one it runs for each call.
 *
 * Versioned: every function name carries SCHEMA_VERSION, so two releases of Sluice that differ in
 * what they run can share one database (and one table: a release that changes a state's layout gives
 * its algorithm a new code, so the keys differ too). The table's layout is kept across versions.
 * Version 2 (the call function takes a batch of calls) decides on the same rows, keys and states as
 * version 1, locks them in the same order (call.sql) and creates its schema under the same lock
 * (SCHEMA_LOCK), so processes of both share counters and start together without deadlock or race.
 * The set-based path of the call function and the twins' `_rows` functions it calls came within
 * version 2: the call function's signature, replies, rows, states, lock strength (FOR UPDATE's) and
 * lock order are unchanged, so builds of version 2 before and after it share one database, each
 * process running whichever body the last schema run left.
 */
export const SCHEMA_VERSION = 2;
/**
 * The fingerprint of a schema's SQL (FNV-1a, 32 bits), written into its call function's body: a call
 * function without this build's is another build's of the version (schemaMark), which Readiness
 * replaces when it may.
 */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
const PREFIX = `sluice_v${SCHEMA_VERSION}_`;
/**
 * The advisory lock every version's schema takes: version 1's, which is released and cannot change.
 * Version 2 took a key of its own, so a v1 and a v2 process starting on an empty database created
 * the table at once (23505 on pg_type_typname_nsp_index in half the runs of an attack).
 */
export const SCHEMA_LOCK = `hashtext('sluice schema'), 1`;

/**
 * How much longer rows live, on the database's clock, than a caller's clock says they matter. A stale
 * state decides like no state, so a longer life changes no decision; an early sweep, under a manual
 * clock that stands still while the database's runs, would. Only tests pass a clock: ten minutes
 * covers a trace on a slow, loaded machine.
 */
export const CLOCK_GRACE_MS = 600_000;
/** Expired rows a consume deletes at most: bounded work per call, and more than a call creates. */
export const SWEEP_ROWS = 16;

/** The table every limiter's counters go to unless `table` says otherwise. */
export const DEFAULT_TABLE = 'sluice_limits';

/** A plain SQL identifier (folded to lower case by PostgreSQL, as when written unquoted). */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** PostgreSQL's longest identifier, less the suffix the call function adds to the table's name. */
const CALL_SUFFIX = `_${PREFIX}call`;
const MAX_TABLE_NAME = 63 - CALL_SUFFIX.length;

/** The table's schema (undefined: the connection's search_path) and name. */
export interface TableName {
  readonly schema: string | undefined;
  readonly name: string;
}

/** `'table'` or `'schema.table'`, or a reason why it is not one. */
export function parseTable(table: string): TableName | string {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((part) => IDENTIFIER.test(part))) {
    return 'expected a plain SQL identifier (letters, digits and _, not starting with a digit), or schema.table';
  }
  const name = parts[parts.length - 1]!;
  if (name.length > MAX_TABLE_NAME) return `expected a table name of at most ${MAX_TABLE_NAME} characters`;
  if (parts.length === 2 && parts[0]!.length > 63) return 'expected a schema name of at most 63 characters';
  return { schema: parts.length === 2 ? parts[0] : undefined, name };
}

/** The names the store's SQL uses, schema-qualified when the table is (`one`'s suffix is the shorter). */
export function namesOf({ schema, name }: TableName): { table: string; call: string; one: string } {
  const at = schema === undefined ? '' : `${schema}.`;
  return { table: `${at}${name}`, call: `${at}${name}${CALL_SUFFIX}`, one: `${at}${name}_${PREFIX}one` };
}

/** The distinct SQL twins (token-bucket and leaky-bucket share gcra's), each with the codes it serves. */
function twins(): Array<{ source: string; twin: string; codes: string[] }> {
  const bySource = new Map<string, { source: string; twin: string; codes: string[] }>();
  for (const algorithm of Object.values(algorithms)) {
    const source = SQL_TWINS[algorithm.name];
    let entry = bySource.get(source);
    if (entry === undefined) {
      const twin = new RegExp(`FUNCTION ${PREFIX}(\\w+)_step{{step}}`).exec(source)?.[1];
      if (twin === undefined) throw new Error(`the SQL twin of ${algorithm.name} defines no ${PREFIX}*_step`);
      entry = { source, twin, codes: [] };
      bySource.set(source, entry);
    }
    entry.codes.push(algorithm.code);
  }
  return [...bySource.values()];
}

/** The signatures every twin's step and refund share: what `{{step}}` and `{{refund}}` stand for in them. */
const STEP_PARAMS =
  'state bigint[], now bigint, cost bigint, lim bigint, w bigint, burst bigint, lease bigint';
const STEP_OUT =
  'allowed boolean, OUT next bigint[], OUT remaining bigint, OUT reset_ms bigint, OUT retry_ms bigint, OUT delay_ms bigint, OUT expires_at bigint';
const REFUND_PARAMS =
  'state bigint[], now bigint, cost bigint, charged_at bigint, lease bigint, lim bigint, w bigint, burst bigint';
const REFUND_OUT = 'next bigint[], OUT expires_at bigint';
const LANGUAGE = 'LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE';
/**
 * The signature of a twin's set-based step (`{{rows}}`), for call.sql's set-based path: step's fields
 * for `cost`, then remaining, reset_ms and delay_ms for cost 0 (what a call that charges nothing
 * reports), as one row. LANGUAGE sql, one SELECT, not STRICT: the planner inlines it.
 */
const ROWS_SIGNATURE = `(state bigint[], now bigint, cost bigint, lim bigint, w bigint, burst bigint)
RETURNS TABLE (allowed boolean, next bigint[], remaining bigint, reset_ms bigint, retry_ms bigint,
  delay_ms bigint, expires_at bigint, idle_remaining bigint, idle_reset_ms bigint, idle_delay_ms bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE`;

const signature = (params: string, out: string) => `(\n  ${params},\n  OUT ${out})\n${LANGUAGE}`;

/** A twin's source with its signatures filled in. */
function withSignatures(source: string): string {
  return source
    .replaceAll('{{step}}', signature(STEP_PARAMS, STEP_OUT))
    .replaceAll('{{refund}}', signature(REFUND_PARAMS, REFUND_OUT))
    .replaceAll('{{rows}}', ROWS_SIGNATURE);
}

/**
 * The twins with a set-based step (`${PREFIX}<twin>_rows`): the codes they serve, and the query
 * call.sql's set-based path steps the batch's policies with (from `s`, a policy and its stored state a
 * row), one SELECT a twin over its own codes' policies.
 */
function setStep(): { codes: string[]; sql: string } {
  const withRows = twins().filter(({ source, twin }) =>
    source.includes(`FUNCTION ${PREFIX}${twin}_rows{{rows}}`),
  );
  return {
    codes: withRows.flatMap(({ codes }) => codes),
    sql: withRows
      .map(
        ({ twin, codes }) =>
          `SELECT s.i, s.n, s.k, s.at, s.clocked, r.* FROM s, LATERAL ${PREFIX}${twin}_rows(s.state, s.at, s.cost, s.lim, s.win, s.burst) r WHERE s.code IN (${codes.map((c) => `'${c}'`).join(', ')})`,
      )
      .join('\n        UNION ALL '),
  };
}

/** `sluice_v2_step(code, ...)` or `sluice_v2_refund(code, ...)`: calls the twin of the algorithm code. */
function dispatcher(kind: 'step' | 'refund', params: string, out: string): string {
  const args = params.replace(/ [a-z[\]]+(,|$)/g, '$1');
  const into = out.replace(/(OUT )?(\w+) [a-z[\]]+/g, '$2');
  const branches = twins().map(
    ({ twin, codes }) =>
      `    WHEN ${codes.map((c) => `'${c}'`).join(', ')} THEN\n      SELECT * INTO ${into} FROM ${PREFIX}${twin}_${kind}(${args});`,
  );
  return `CREATE OR REPLACE FUNCTION ${PREFIX}${kind}${signature(`code text, ${params}`, out)} AS $$
BEGIN
  CASE code
${branches.join('\n')}
    ELSE RAISE EXCEPTION 'sluice: unknown algorithm %', code;
  END CASE;
END $$;
`;
}

/**
 * The comment Sluice puts on a table it creates: how it tells its own table from an app's (the sweep
 * deletes a table's expired rows, so a table of the app's named by `table` must never be taken).
 */
export const TABLE_MARK = 'Sluice PostgresStore table';
/** The SQLSTATE (class SL: Sluice's own) the schema raises for a table Sluice did not create. */
export const FOREIGN_TABLE_STATE = 'SL001';

/**
 * SQL for what `table` is: 'missing'; 'sluice', a table with Sluice's mark, or with none but exactly
 * the table releases before the mark created (its columns with their types, collation and NOT NULLs,
 * and its two indexes by name: a table of the app's matches none of that by chance); else 'foreign'.
 */
export function tableVerdictSql(table: TableName): string {
  const { table: qualified } = namesOf(table);
  // The names in the catalog, as PostgreSQL folds the unquoted ones the schema's SQL writes (IDENTIFIER
  // admits ASCII alone, which toLowerCase folds as PostgreSQL does): RateLimits_pkey is ratelimits_pkey.
  const name = table.name.toLowerCase();
  return `(SELECT CASE
    WHEN t.oid IS NULL THEN 'missing'
    WHEN obj_description(t.oid, 'pg_class') LIKE '${TABLE_MARK}%' THEN 'sluice'
    WHEN (SELECT array_agg(format('%s %s %s %s', a.attname, format_type(a.atttypid, a.atttypmod),
            coalesce(c.collname, '-'), a.attnotnull) ORDER BY a.attnum)
          FROM pg_attribute a LEFT JOIN pg_collation c ON c.oid = a.attcollation
          WHERE a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped)
        = ARRAY['key text C t', 'state bigint[] - f', 'expires_at bigint - t']
      AND (SELECT array_agg(ic.relname::text ORDER BY ic.relname)
          FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indrelid = t.oid)
        = ARRAY['${name}_expires_at', '${name}_pkey'] THEN 'sluice'
    ELSE 'foreign' END
  FROM (SELECT to_regclass('${qualified}')::oid AS oid) t)`;
}

/**
 * Everything the store needs, as SQL statements to run in one transaction (PostgresStore runs them
 * so, when `createTable` is on). Idempotent; the advisory lock (held until the transaction ends)
 * serializes processes creating it at once, which DDL alone does not. The table is created, marked
 * and indexed only when missing (so a run on a live table takes no lock on it), and a table that is
 * there but not Sluice's stops the run (FOREIGN_TABLE_STATE) before anything is created beside it.
 */
export function schemaSql(table: TableName): string {
  const { table: qualified, call: callName, one } = namesOf(table);
  const at = table.schema === undefined ? '' : `${table.schema}.`;
  // Helper and twin names qualified by the table's schema, so that the call function finds them.
  const qualify = (sql: string) =>
    at === '' ? sql : sql.replace(new RegExp(`\\b${PREFIX}`, 'g'), `${at}${PREFIX}`);
  const set = setStep();
  const body = call
    .replaceAll('{{table}}', qualified)
    .replaceAll('{{call}}', callName)
    .replaceAll('{{one}}', one)
    .replaceAll('{{grace}}', String(CLOCK_GRACE_MS))
    .replaceAll('{{sweep}}', String(SWEEP_ROWS))
    .replaceAll('{{set_codes}}', `{${set.codes.join(',')}}`)
    .replaceAll('{{set_step}}', set.sql);
  const sql = `-- Sluice PostgresStore schema v${SCHEMA_VERSION} for table ${qualified} (PostgresStore.schema()).
SELECT pg_advisory_xact_lock(${SCHEMA_LOCK});

-- One row per key of every limiter: key (prefix, limiter, policy, algorithm, subject), the algorithm's
-- state, and when the row may be deleted (ms since the epoch, database clock).
DO $sluice$ BEGIN
  CASE ${tableVerdictSql(table)}
    WHEN 'missing' THEN
      CREATE TABLE IF NOT EXISTS ${qualified} (
        key text COLLATE "C" PRIMARY KEY,
        state bigint[],
        expires_at bigint NOT NULL
      ) WITH (fillfactor = 80);
      -- The usual name, which version 1's CREATE INDEX IF NOT EXISTS looks for, unless an index of a
      -- table renamed away (ALTER TABLE ... RENAME) still has it: then one PostgreSQL names.
      IF to_regclass('${at}${table.name}_expires_at') IS NULL THEN
        CREATE INDEX ${table.name}_expires_at ON ${qualified} (expires_at);
      ELSE
        CREATE INDEX ON ${qualified} (expires_at);
      END IF;
      COMMENT ON TABLE ${qualified} IS '${TABLE_MARK} (schema v${SCHEMA_VERSION}): created by Sluice, which deletes its expired rows';
    WHEN 'foreign' THEN
      RAISE EXCEPTION 'sluice: table ${qualified} was not created by Sluice'
        USING ERRCODE = '${FOREIGN_TABLE_STATE}',
          HINT = 'PostgresStore deletes the expired rows of its table: give it a table of its own';
    ELSE NULL;
  END CASE;
END $sluice$;

${qualify(helpers)}
${twins()
  .map(({ source }) => qualify(withSignatures(source)))
  .join('\n')}
-- Each algorithm code's twin.
${qualify(dispatcher('step', STEP_PARAMS, STEP_OUT))}
${qualify(dispatcher('refund', REFUND_PARAMS, REFUND_OUT))}
${qualify(body)}`;
  return sql.replaceAll('{{mark}}', `sluice schema v${SCHEMA_VERSION} build ${fingerprint(sql)}`);
}

/** What the call function of this build's schema for `table` holds in its body (schemaSql). */
export function schemaMark(table: TableName): string {
  return /-- (sluice schema v\d+ build [0-9a-f]{8})\n/.exec(schemaSql(table))![1]!;
}

/**
 * Jest setup (setupFilesAfterEnv): a SluiceWarning that no test captured fails the test it came in.
 *
 * A test that expects a warning captures it (recordWarnings in ./warnings.ts, or its own spy on
 * process.emitWarning, which sits above this one while it is installed); whatever reaches this wrapper
 * was expected by nobody. It is still printed, and the test fails naming it, so that a new warning
 * stands out instead of joining hundreds of expected ones on stderr. Other warnings pass untouched.
 */

const original = process.emitWarning;
const uncaptured: string[] = [];

function sluiceWarning(warning: unknown, options: unknown): string | undefined {
  const o =
    typeof options === 'object' && options !== null ? (options as { type?: unknown; code?: unknown }) : {};
  const type = typeof options === 'string' ? options : o.type;
  const code = typeof o.code === 'string' ? o.code : undefined;
  if (type !== 'SluiceWarning' && !code?.startsWith('ERR_SLUICE_')) return undefined;
  const message = warning instanceof Error ? warning.message : String(warning);
  return `[${code ?? 'no code'}] ${message}`;
}

/**
 * Said of a test process itself, never of the test: every test builds its apps afresh, long after the
 * first served, with limiters of the same names (created-per-request.test.ts asserts the warning).
 */
const OF_THE_TEST_PROCESS = '[ERR_SLUICE_CREATED_PER_REQUEST]';

process.emitWarning = function emitWarning(this: unknown, warning: unknown, ...rest: unknown[]) {
  const seen = sluiceWarning(warning, rest[0]);
  if (seen?.startsWith(OF_THE_TEST_PROCESS)) return;
  if (seen !== undefined) uncaptured.push(seen);
  return (original as (...args: unknown[]) => void).call(this, warning, ...rest);
} as typeof process.emitWarning;

/** Throws (failing the test or the file) if a SluiceWarning went uncaptured since the last check. */
function check(where: string): void {
  if (uncaptured.length === 0) return;
  const list = uncaptured.splice(0).map((w) => `  ${w}`);
  throw new Error(
    `${list.length} SluiceWarning(s) ${where} that no test captured:\n${list.join('\n')}\n` +
      'Capture an expected warning (recordWarnings in test/support/warnings.ts) and assert its code, or ' +
      "turn an incidental one off with the limiter's `validate` option." +
      // A fuzzed draw may have made it: fast-check never sees a failure after its property passed.
      (process.env.SLUICE_FC_SEED ? `\nDrawn again with SLUICE_FC_SEED=${process.env.SLUICE_FC_SEED}.` : ''),
  );
}

afterEach(() => check('during this test (or its file’s setup)'));
afterAll(() => {
  try {
    check('after the last test of this file');
  } finally {
    process.emitWarning = original;
  }
});

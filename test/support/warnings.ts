/**
 * The codes of the Sluice warnings emitted during each test of the enclosing describe, in order
 * (process.emitWarning mocked). ERR_SLUICE_CREATED_PER_REQUEST is left out: limiters made afresh for
 * each test share names and would read as limiters made per request (created-per-request.test.ts).
 */
export function recordWarnings(): { readonly codes: string[]; readonly messages: string[] } {
  const seen = { codes: [] as string[], messages: [] as string[] };
  let spy: jest.SpyInstance;
  beforeEach(() => {
    seen.codes.length = 0;
    seen.messages.length = 0;
    spy = jest.spyOn(process, 'emitWarning').mockImplementation(((message: string, o?: { code?: string }) => {
      if (!o?.code?.startsWith('ERR_SLUICE_') || o.code === 'ERR_SLUICE_CREATED_PER_REQUEST') return;
      seen.codes.push(o.code);
      seen.messages.push(String(message));
    }) as never);
  });
  afterEach(() => spy.mockRestore());
  return seen;
}

/**
 * recordWarnings, and each test of the enclosing describe may emit only warnings of these codes (a
 * suite whose warnings are part of what it does, such as a store's outage and recovery).
 */
export function expectOnlyWarnings(...codes: string[]): ReturnType<typeof recordWarnings> {
  const seen = recordWarnings();
  afterEach(() => {
    expect(seen.codes.filter((code) => !codes.includes(code))).toEqual([]);
  });
  return seen;
}

/**
 * Drops the warnings of these codes for the rest of the test file (installed at once, so limiters made
 * while the file is collected are covered): for files whose options make them on purpose, such as
 * traces that draw windows of a few milliseconds as bare numbers (ERR_SLUICE_WINDOW_IN_SECONDS).
 */
export function allowWarnings(...codes: string[]): void {
  const inner = process.emitWarning;
  const filtered = function emitWarning(this: unknown, warning: unknown, ...rest: unknown[]) {
    const code = (rest[0] as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string' && codes.includes(code)) return;
    return (inner as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  process.emitWarning = filtered;
  afterAll(() => {
    if (process.emitWarning === filtered) process.emitWarning = inner;
  });
}

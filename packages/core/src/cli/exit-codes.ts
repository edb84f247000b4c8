/**
 * What `sluice` exits with, for scripts (documented in docs/operator.md; stable across versions).
 */
export const ExitCodes = {
  /**
   * Done; for `inspect`, the subject would be allowed now. `reset` that found no count exits 0 too, as
   * `inspect` does under NOTHING_COUNTED: the warning, not the code, says the options may not be the app's.
   */
  OK: 0,
  /** `inspect` only: the subject is limited now (a policy denies it, or it is banned). */
  LIMITED: 1,
  /** Bad usage or configuration: nothing was read or changed. */
  USAGE: 2,
  /** The store could not be reached or failed: nothing is known, nothing was changed. */
  STORE: 3,
  /** Anything else (a bug, or the config module's own code threw): the message says what. */
  UNEXPECTED: 4,
} as const;

export type ExitCode = (typeof ExitCodes)[keyof typeof ExitCodes];

/** A failure the command reports as one line and an exit code (never a stack trace). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export function usageError(message: string): CliError {
  return new CliError(message, ExitCodes.USAGE);
}

/**
 * The few Node globals the core uses, with a fallback where a runtime lacks them (workerd without
 * nodejs_compat has no `process`; its timers are numbers, with no `unref`).
 */

interface WarningProcess {
  emitWarning(message: string, options: { code: string; type: string }): void;
}

/**
 * `process.emitWarning(message, { code, type: 'SluiceWarning' })` on Node, Deno and Bun; elsewhere the
 * console, in the form Node prints it.
 */
export function emitWarning(message: string, code: string): void {
  const proc = (globalThis as { process?: Partial<WarningProcess> }).process;
  if (typeof proc?.emitWarning === 'function') proc.emitWarning(message, { code, type: 'SluiceWarning' });
  else console.warn(`(sluice) [${code}] SluiceWarning: ${message}`);
}

/** `setImmediate` where there is one (after pending I/O), else a zero-delay timer. */
export const soon: (task: () => void) => void =
  typeof setImmediate === 'function' ? (task) => setImmediate(task) : (task) => setTimeout(task, 0);

/** Lets the process exit with this timer pending, where timers can say so. */
export function unref(timer: unknown): void {
  (timer as { unref?: () => void } | undefined)?.unref?.();
}

import type { CliWarning } from './credential-check.js';

/** The window algorithms' resetMs runs to the window's end even when nothing is counted in it. */
const WINDOWED = new Set(['fixed-window', 'sliding-window']);

/**
 * Whether the store holds anything of the subject under this policy: a quota short of its limit, or
 * (buckets, GCRA, the log) a time to refill. Not counted means never seen in the window, or looked up
 * under keys other than the app's.
 */
export function counted(p: {
  readonly algorithm: string;
  readonly limit: number;
  readonly remaining: number;
  readonly resetMs: number;
}): boolean {
  return p.remaining < p.limit || (!WINDOWED.has(p.algorithm) && p.resetMs > 0);
}

/**
 * Flags rebuild the app's limiter by hand, and a --prefix, --name, --algorithm or window unlike the
 * app's finds nothing: "allowed now" was then said with confidence of a client the app was refusing
 * (newcomer review, #28). `fromFlags`: no --config module gave the limiter.
 */
export function countedWarnings(anyCounted: boolean, fromFlags: boolean): CliWarning[] {
  if (anyCounted || !fromFlags) return [];
  return [
    {
      code: 'NOTHING_COUNTED',
      message:
        "nothing is counted for this subject under these flags: if the app is limiting it, its --prefix, --name or --policies differ from the app's (--config with the app's options reads its own)",
    },
  ];
}

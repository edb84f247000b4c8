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

/** How the limiter was given: flags, or a --config module (`unnamed`: its options name no limiter). */
export type LimiterGiven = 'flags' | 'module' | 'unnamed-module';

/**
 * Flags rebuild the app's limiter by hand, and a --prefix, --name, --algorithm or window unlike the
 * app's finds nothing: "allowed now" was then said with confidence of a client the app was refusing
 * (newcomer review, #28). A module that names no limiter is read as 'default', but @sluice/fastify's
 * plugin names its global limit 'global' then: the same silence, for a module shared with the plugin.
 * `store`: what of --store may differ from the app's, in its kind's terms (stores.ts). `banLifted`:
 * reset lifted a ban that the policies, counted elsewhere, will start again (review 28).
 */
export function countedWarnings(
  anyCounted: boolean,
  given: LimiterGiven,
  {
    store,
    banLifted = false,
    rawCredential,
  }: { store?: string; banLifted?: boolean; rawCredential?: string } = {},
): CliWarning[] {
  if (anyCounted) return [];
  const again = banLifted
    ? '; its ban was lifted, but a client the app counts elsewhere is banned again when it is next refused'
    : '';
  // Said first, and under any options: a raw key after key: was answered "allowed now" (hostile test).
  if (rawCredential !== undefined) {
    return [
      {
        code: 'NOTHING_COUNTED',
        message: `nothing is counted for this subject: key: and token: subjects are stored hashed (SHA-256, or HMAC-SHA-256 under credentialSecret), so --subject ${rawCredential}<raw credential> is never the app's; give a raw API key with --api-key and a raw bearer token with --token${again}`,
      },
    ];
  }
  if (given === 'module') return [];
  return [
    {
      code: 'NOTHING_COUNTED',
      message:
        given === 'flags'
          ? `nothing is counted for this subject under these flags: if the app is limiting it, a flag differs from the app's options (--name, --prefix, or the policy's --limit, --window, --algorithm, --burst, or --policies)${store === undefined ? '' : `, or ${store}`}; --config with the app's options reads its own${again}`
          : `nothing is counted for this subject under the module's options, which name no limiter (read as 'default'): @sluice/fastify's plugin names its global limit 'global', so for an app that registers it, give --name global${again}`,
    },
  ];
}

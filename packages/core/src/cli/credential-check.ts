import type { HttpConfig } from '../http/options.js';
import type { Who } from './args.js';
import { usageError } from './exit-codes.js';

/**
 * Where the command's credentialSecret came from, as far as it can tell whether it hashes a key as the
 * app does: the app's options module (`module`: it names credentialSecret, set or not), the
 * environment (`env`), or nowhere it could check against the app (`none`).
 */
export interface SecretSource {
  /** The module names `credentialSecret` but it is unset here (its variable is not in this shell). */
  readonly namedButUnset: boolean;
  /** The module's options are the app's own, so an absent credentialSecret is the app's too. */
  readonly fromAppOptions: boolean;
  /** A secret is in use (the module's or SLUICE_CREDENTIAL_SECRET). */
  readonly secret: boolean;
}

/** A warning of the command's own: a code for scripts (`--json`), a line for people. */
export interface CliWarning {
  readonly code:
    | 'CREDENTIAL_SECRET_UNSET'
    | 'CREDENTIAL_HASH_UNCONFIRMED'
    | 'BAN_NOT_CHECKED'
    | 'NOTHING_COUNTED';
  readonly message: string;
}

/**
 * Why the key the command looks up may not be the one the app writes. A credential without verify is
 * hashed: with no secret here, plain SHA-256, which finds nothing if the app hashes under a secret,
 * and then "allowed now" was said with confidence (newcomer review, #28). Said, never guessed past.
 */
export function credentialWarnings(
  who: Who,
  config: HttpConfig<unknown, unknown>,
  source: SecretSource,
): CliWarning[] {
  if (who.kind !== 'api-key' && who.kind !== 'token') return [];
  if (config.subject.verify !== undefined || source.secret) return [];
  const flag = `--${who.kind}`;
  if (source.namedButUnset) {
    return [
      {
        code: 'CREDENTIAL_SECRET_UNSET',
        message: `the options name credentialSecret, but it is unset here: ${flag} was hashed with plain SHA-256, not as the app hashes it, so nothing the app counted can be found (set the variable the module reads, or SLUICE_CREDENTIAL_SECRET)`,
      },
    ];
  }
  if (source.fromAppOptions) return [];
  return [
    {
      code: 'CREDENTIAL_HASH_UNCONFIRMED',
      message: `no credentialSecret given: ${flag} was hashed with plain SHA-256, as an app without one does; if the app sets credentialSecret, this is not its key and finds nothing (set SLUICE_CREDENTIAL_SECRET, or use --config with the app's options)`,
    },
  ];
}

/**
 * `reset` under a credentialSecret unset here would reset a key the app never wrote, and exit 0 while
 * the client stayed limited (newcomer review 28): refused before the store is touched. inspect only warns.
 */
export function refuseUnconfirmedReset(who: Who, warnings: readonly CliWarning[]): void {
  if (!warnings.some((w) => w.code === 'CREDENTIAL_SECRET_UNSET')) return;
  throw usageError(
    `reset: the options name credentialSecret, but it is unset here, so --${who.kind} cannot be hashed as the app hashes it and the reset would change a key the app never wrote: set the variable the module reads (or SLUICE_CREDENTIAL_SECRET) and run it again`,
  );
}

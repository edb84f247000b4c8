import type { HttpConfig } from '../http/options.js';
import type { CliWarning } from './credential-check.js';

/**
 * Whether the command can speak of the subject's ban. Without ban flags, or a --config module of the
 * app's own options, it knows of no ban to look up, and said "ban: none configured" of a subject the
 * app was answering 403 (newcomer review 28): not checked is what it is.
 */
export const BAN_NOT_CHECKED = "not checked (give --ban-after/--ban-for, or --config with the app's options)";

/** `appOptions`: the options are the app's own (--config exporting options), so no ban there is none. */
export function banWarnings(config: HttpConfig<unknown, unknown>, appOptions: boolean): CliWarning[] {
  if (config.ban !== undefined || appOptions) return [];
  return [
    {
      code: 'BAN_NOT_CHECKED',
      message: `ban ${BAN_NOT_CHECKED}: a subject the app bans may be answered 403 whatever its limits say`,
    },
  ];
}

/**
 * What `reset` says of the ban. "It was not banned" only where the ban options are the app's (ban
 * flags, or a module of its options); without them the ban was never looked up, and stays.
 */
export function resetBanText(
  config: HttpConfig<unknown, unknown>,
  banLifted: boolean,
  appOptions: boolean,
): string {
  if (config.ban !== undefined) return banLifted ? 'its ban lifted too' : 'it was not banned';
  // The app's own options without a ban: the app bans no one (inspect's "ban: none configured").
  if (appOptions) return 'the app has no ban';
  return `ban ${BAN_NOT_CHECKED}; a ban stays`;
}

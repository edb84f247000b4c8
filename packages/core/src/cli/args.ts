import { parseArgs } from 'node:util';
import { addressOf } from '../http/ip.js';
import { usageError } from './exit-codes.js';

export type Command = 'inspect' | 'reset';

/** The command line, read but not yet checked against the limiter's options. */
export interface CliArgs {
  readonly command: Command;
  readonly json: boolean;
  /** A module whose export is the app's limiter options (or a limiter). */
  readonly config: string | undefined;
  readonly store: string | undefined;
  /** The limiter's options given as flags instead of a module. */
  readonly flags: Readonly<Record<string, string | undefined>>;
  readonly who: Who;
  readonly plan: string | undefined;
}

/** Whose limit: exactly one of these, as the app would see it in a request. */
export type Who =
  | { readonly kind: 'ip'; readonly value: string }
  | { readonly kind: 'api-key'; readonly value: string }
  | { readonly kind: 'token'; readonly value: string }
  | { readonly kind: 'id'; readonly value: string }
  | { readonly kind: 'subject'; readonly value: string };

const WHO = ['ip', 'api-key', 'token', 'id', 'subject'] as const;
/** Flags that describe the limiter; with --config they come from the module instead. */
export const LIMITER_FLAGS = [
  'name',
  'prefix',
  'limit',
  'window',
  'algorithm',
  'burst',
  'policies',
  'ban-after',
  'ban-within',
  'ban-for',
  'api-key-header',
  'api-key-query',
  'ipv6-subnet',
] as const;

export const USAGE = `Usage: sluice <inspect|reset> <whose limit> (--config <module> | --store <url> <limiter flags>) [--json]

  inspect   show each policy's remaining, reset time and the ban, for one subject (changes nothing)
  reset     forget the subject under every policy and lift its ban (what limiter.reset does)

Whose limit (one of):
  --ip <address>       a client address (IPv6 grouped by the limiter's ipv6Subnet, as the app does)
  --api-key <key>      an API key: verified or hashed exactly as the app does (credentialSecret from
                       the module or SLUICE_CREDENTIAL_SECRET), never printed
  --token <token>      a bearer token, the same way
  --id <value>         what verify or a subject function returned (the subject 'id:<value>')
  --subject <subject>  a subject as the app reports it (subjectOf, onDecision): 'ip:203.0.113.7';
                       it starts with ip:, key:, token: or id: (any subject for a module's limiter)

The limiter:
  --config <module>    a module exporting the options the app passes (default export, or 'options'),
                       or a limiter: the same store, name, prefix, policies, ban and credentialSecret
  --store <url>        redis://host:6379, valkey://host:6379, redis-cluster://host:7000,host:7001,
                       postgres://user@host:5432/db (?table=schema.table for a PostgresStore table)
  --name <name>  --prefix <prefix>  (defaults 'default' and 'sluice', as in the app); --name alone may
                       go beside --config, to override its name (@sluice/fastify's plugin names its
                       global limit 'global' when the options name none)
  --limit <n> --window <duration> [--algorithm <name>] [--burst <n>]   one policy, or
  --policies '<json array of policies>'
  --ban-after <n> --ban-for <duration> [--ban-within <duration>]     the app's ban option
  --api-key-header <name>  --api-key-query <name>  --ipv6-subnet <bits|false>
  --plan <name>        with plans: that plan only (default: every plan)

  --json               one JSON object on stdout
Exit codes: 0 done (inspect: allowed now; reset: also when nothing was counted, said on stderr),
1 inspect: limited or banned now, 2 usage or configuration error, 3 store unreachable or failing,
4 unexpected error.`;

export function parseCli(argv: readonly string[]): CliArgs {
  let parsed: ReturnType<typeof parseWith>;
  try {
    parsed = parseWith(argv);
  } catch (error) {
    throw usageError(`${parseError(error as Error)} (sluice --help lists the options)`);
  }
  const { values, positionals } = parsed;
  const [command, ...extra] = positionals;
  if (command !== 'inspect' && command !== 'reset') {
    throw usageError(
      `${command === undefined ? 'no command' : `unknown command '${command}'`}: give inspect or reset\n\n${USAGE}`,
    );
  }
  if (extra.length > 0) throw usageError(`unexpected argument '${extra[0]}'`);
  const given = WHO.filter((kind) => values[kind] !== undefined);
  if (given.length !== 1) {
    throw usageError(
      given.length === 0
        ? 'whose limit? give one of --ip, --api-key, --token, --id or --subject'
        : `give one of --ip, --api-key, --token, --id or --subject, not ${given.map((g) => `--${g}`).join(' and ')}`,
    );
  }
  const kind = given[0]!;
  const value = values[kind] as string;
  if (value === '') throw usageError(`--${kind} is empty`);
  // The app never counts a client under a string that is no address: such a subject finds nothing.
  if (kind === 'ip' && addressOf(value, false) === undefined) {
    throw usageError(
      `--ip: ${JSON.stringify(value)} is not an IP address (write 203.0.113.7 or 2001:db8::1)`,
    );
  }
  const flags: Record<string, string | undefined> = {};
  for (const flag of LIMITER_FLAGS) flags[flag] = values[flag] as string | undefined;
  return {
    command,
    json: values.json === true,
    config: values.config as string | undefined,
    store: values.store as string | undefined,
    flags,
    who: { kind, value },
    plan: values.plan as string | undefined,
  };
}

/**
 * The app's option names an operator types from its config (`--windowMs 60000`): the flag they are.
 * Others are told by parseArgs, whose text for an unknown option is about positionals.
 */
const FLAG_FOR: Readonly<Record<string, string>> = {
  windowMs: "--window (milliseconds, or a duration such as '15m')",
  max: '--limit',
  points: '--limit',
  duration: "--window (rate-limiter-flexible's duration is seconds: duration 60 is --window 60s)",
  ttl: '--window (milliseconds, or a duration such as 1m)',
  timeWindow: '--window',
  keyPrefix: '--prefix',
  ipv6Subnet: '--ipv6-subnet',
  banAfter: '--ban-after',
  banFor: '--ban-for',
  apiKey: '--api-key (a key to look up) or --api-key-header (the app option)',
};

/** parseArgs' error as one clear line: an unknown option named, with the flag meant where known. */
function parseError(error: Error): string {
  const unknown = /^Unknown option '(-{1,2})([^'=]+)'/.exec(error.message);
  if (unknown === null) return error.message;
  const [, dashes, name] = unknown;
  const flag = Object.hasOwn(FLAG_FOR, name!) ? FLAG_FOR[name!] : undefined;
  return `Unknown option '${dashes}${name}'${flag === undefined ? '' : `: write ${flag}`}`;
}

function parseWith(argv: readonly string[]) {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    json: { type: 'boolean' },
    help: { type: 'boolean' },
    config: { type: 'string' },
    store: { type: 'string' },
    plan: { type: 'string' },
  };
  for (const kind of WHO) options[kind] = { type: 'string' };
  for (const flag of LIMITER_FLAGS) options[flag] = { type: 'string' };
  return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
}

export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h') || argv.length === 0;
}

import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseHttpOptions } from '../http/options.js';
import type { HttpOptions } from '../http/types.js';
import type { Limiter } from '../limiter.js';
import type { Policy } from '../options.js';
import type { Store } from '../stores/store.js';
import { type CliArgs, LIMITER_FLAGS } from './args.js';
import type { StoreFailure } from './commands.js';
import type { SecretSource } from './credential-check.js';
import { CliError, ExitCodes, usageError } from './exit-codes.js';
import { quietModuleClient } from './module-store.js';
import { redactUrl } from './redact.js';
import { causeText, watchStore } from './store-watch.js';
import { type OpenedStore, openStore } from './stores.js';

/** The app's options as the command will parse them, and the store connection it must close. */
export interface LimiterSource {
  readonly options: HttpOptions;
  /** The connection the command opened (`--store`); none when the module brought its own store. */
  readonly opened: OpenedStore | undefined;
  /** How the store is named in the report (a URL without its password, or 'the module's store'). */
  readonly storeLabel: string;
  /** The exit-3 line's words when the store fails (commands.ts). */
  readonly failure: StoreFailure;
  /** Where credentialSecret came from: whether a credential hashes here as in the app (credential-check.ts). */
  readonly secret: SecretSource;
  /**
   * A --config module of options that name no limiter, and no --name: read as 'default', where
   * @sluice/fastify's plugin would have named its global limit 'global' (counted-check.ts).
   */
  readonly unnamed: boolean;
}

/** Beside --config, only the limiter's name may be given: the plugins name a limit the module may not. */
const CONFIG_OVERRIDES: readonly string[] = ['name'];

/** The app's options, from `--config` or from the limiter flags and `--store`. */
export async function limiterSource(args: CliArgs): Promise<LimiterSource> {
  const flagged = LIMITER_FLAGS.filter((f) => args.flags[f] !== undefined);
  if (args.config !== undefined) {
    const extra = flagged.filter((f) => !CONFIG_OVERRIDES.includes(f));
    if (extra.length > 0) {
      throw usageError(
        `--config gives the limiter (only --name may override it); drop ${extra.map((f) => `--${f}`).join(', ')}`,
      );
    }
    const loaded = await loadModule(args.config);
    const name = args.flags.name;
    if (name !== undefined && loaded.isLimiter) {
      throw usageError(`--name: ${args.config} exports a limiter, whose name is its own; drop --name`);
    }
    const { options: own, secret } = withSecret(loaded.options, loaded.isLimiter);
    const options = name === undefined ? own : { ...own, name };
    const unnamed = !loaded.isLimiter && options.name === undefined;
    if (options.store !== undefined || options.limiter !== undefined) {
      if (args.store !== undefined) throw usageError('--store: the module gives its store already');
      const store = options.store ?? (options.limiter as Limiter).config?.store;
      const client = quietModuleClient(store);
      const storeError = watchStore(store as Store | undefined);
      const own = `the store of ${args.config}`;
      const storeLabel = client.address === undefined ? own : `${client.address} (${own})`;
      // The client's own error (a refused connection) says more than the store's ("Connection is closed").
      const failure = failureOf(storeLabel, () => client.firstError() ?? storeError());
      return { options, opened: undefined, storeLabel, failure, secret, unnamed };
    }
    if (args.store === undefined) throw usageError(`${args.config} gives no store: add --store <url>`);
    const opened = await openStore(args.store);
    return {
      options: { ...options, store: opened.store },
      opened,
      storeLabel: redactUrl(args.store),
      failure: failureOf(redactUrl(args.store), watchStore(opened.store)),
      secret,
      unnamed,
    };
  }
  if (args.store === undefined)
    throw usageError('which limiter? give --config <module>, or --store <url> and its policies');
  const options = optionsFromFlags(args.flags);
  // Checked before connecting: a mistyped policy is exit 2 whether or not the store is up.
  parseHttpOptions({ ...options, validate: false });
  const opened = await openStore(args.store);
  // A failing store is reported (exit 3), never decided around: no local fallback for the operator.
  return {
    options: { ...options, store: opened.store, onStoreError: 'deny' },
    opened,
    storeLabel: redactUrl(args.store),
    failure: failureOf(redactUrl(args.store), watchStore(opened.store)),
    secret: { namedButUnset: false, fromAppOptions: false, secret: options.credentialSecret !== undefined },
    unnamed: false,
  };
}

/** The exit-3 line: where the store is, and its first error when one was seen. */
function failureOf(storeLabel: string, firstError: () => Error | undefined): StoreFailure {
  return () => {
    const cause = firstError();
    return `${storeLabel} failed to answer${cause === undefined ? '' : `: ${causeText(cause)}`}`;
  };
}

/**
 * The module's credentialSecret, or SLUICE_CREDENTIAL_SECRET where the module gives none (as --help
 * says). A module that names credentialSecret but reads it from a variable unset in this shell is told
 * apart: its keys would hash elsewhere than the app's.
 */
function withSecret(
  options: HttpOptions,
  isLimiter: boolean,
): { options: HttpOptions; secret: SecretSource } {
  const named = Object.hasOwn(options, 'credentialSecret');
  const env = process.env.SLUICE_CREDENTIAL_SECRET;
  const own = options.credentialSecret;
  const unset = own === undefined;
  const merged = unset && env ? { ...options, credentialSecret: env } : options;
  return {
    options: merged,
    secret: {
      namedButUnset: named && unset && !env,
      fromAppOptions: !isLimiter,
      secret: merged.credentialSecret !== undefined,
    },
  };
}

/** The limiter flags as the app's options; their checks are the app's own (parseHttpOptions). */
function optionsFromFlags(flags: CliArgs['flags']): HttpOptions {
  const options: Record<string, unknown> = {};
  if (flags.name !== undefined) options.name = flags.name;
  if (flags.prefix !== undefined) options.prefix = flags.prefix;
  if (flags.policies !== undefined) options.policies = jsonFlag('policies', flags.policies) as Policy[];
  if (flags.limit !== undefined) options.limit = numberFlag('limit', flags.limit);
  if (flags.window !== undefined) options.window = durationFlag(flags.window);
  if (flags.algorithm !== undefined) options.algorithm = flags.algorithm;
  if (flags.burst !== undefined) options.burst = numberFlag('burst', flags.burst);
  if (
    flags['ban-after'] !== undefined ||
    flags['ban-for'] !== undefined ||
    flags['ban-within'] !== undefined
  ) {
    options.ban = {
      after: flags['ban-after'] === undefined ? undefined : numberFlag('ban-after', flags['ban-after']),
      for: flags['ban-for'] === undefined ? undefined : durationFlag(flags['ban-for']),
      ...(flags['ban-within'] === undefined ? {} : { within: durationFlag(flags['ban-within']) }),
    };
  }
  if (flags['api-key-header'] !== undefined || flags['api-key-query'] !== undefined) {
    options.apiKey = {
      ...(flags['api-key-header'] === undefined ? {} : { header: flags['api-key-header'] }),
      ...(flags['api-key-query'] === undefined ? {} : { query: flags['api-key-query'] }),
    };
  }
  if (flags['ipv6-subnet'] !== undefined) {
    options.ipv6Subnet =
      flags['ipv6-subnet'] === 'false' ? false : numberFlag('ipv6-subnet', flags['ipv6-subnet']);
  }
  const secret = process.env.SLUICE_CREDENTIAL_SECRET;
  if (secret) options.credentialSecret = secret;
  return options as HttpOptions;
}

function numberFlag(flag: string, text: string): number {
  if (!/^\d+$/.test(text)) throw usageError(`--${flag}: expected a whole number; got '${text}'`);
  return Number(text);
}

/** A duration flag: digits alone are milliseconds, as in the app; anything else is the app's string form. */
function durationFlag(text: string): number | string {
  return /^\d+$/.test(text) ? Number(text) : text;
}

function jsonFlag(flag: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usageError(`--${flag}: not JSON (${(error as Error).message})`);
  }
}

/**
 * The module's default export (or its `options`): the options object the app passes to its adapter
 * or to createLimiter, or a limiter, taken as `{ limiter }`.
 */
async function loadModule(path: string): Promise<{ options: HttpOptions; isLimiter: boolean }> {
  const url = pathToFileURL(isAbsolute(path) ? path : resolve(process.cwd(), path)).href;
  let mod: Record<string, unknown>;
  try {
    mod = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    throw new CliError(`--config: cannot load ${path}: ${(error as Error).message}`, ExitCodes.USAGE);
  }
  let exported = mod.options ?? mod.default;
  // A CommonJS module's `module.exports` arrives as the default export.
  if (isObject(exported) && mod.options === undefined && isObject(exported.options))
    exported = exported.options;
  if (!isObject(exported)) {
    throw usageError(
      `--config: ${path} must export the limiter's options (default export or 'options'), or a limiter`,
    );
  }
  return isLimiter(exported)
    ? { options: { limiter: exported }, isLimiter: true }
    : { options: exported as HttpOptions, isLimiter: false };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isLimiter(value: Record<string, unknown>): value is Limiter & Record<string, unknown> {
  return (
    typeof value.peek === 'function' &&
    typeof value.reset === 'function' &&
    typeof value.consume === 'function'
  );
}

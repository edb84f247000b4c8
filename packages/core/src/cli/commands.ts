import type { Decision } from '../decision.js';
import { Ban } from '../http/ban.js';
import type { HttpConfig } from '../http/options.js';
import type { Limiter } from '../limiter.js';
import { counted } from './counted-check.js';
import { CliError, ExitCodes } from './exit-codes.js';

/**
 * What the command says when the store fails, in its exit-3 line: where the store is and, when known,
 * why ("the store failed to answer (see the warning above)" named neither; review 28).
 */
export type StoreFailure = () => string;

/** One policy of one limiter, as the operator reads it. */
export interface PolicyReport {
  readonly name: string;
  readonly algorithm: string;
  readonly limit: number;
  readonly windowMs: number;
  /** What a request of cost 1 would leave (the limiter's peek). */
  readonly remaining: number;
  /** Until the policy is back to full quota, and when that is. */
  readonly resetMs: number;
  readonly resetAt: string;
  /** Whether a request of cost 1 would pass this policy now. */
  readonly allowed: boolean;
}

export interface BanReport {
  readonly banned: boolean;
  /** Until the ban ends (0 when not banned), and when that is (null when not banned). */
  readonly endsInMs: number;
  readonly endsAt: string | null;
}

export interface LimiterReport {
  readonly limiter: string;
  /** The plan, when the app's options have plans; null otherwise (always present in --json). */
  readonly plan: string | null;
  readonly allowed: boolean;
  readonly retryAfterMs: number;
  /** Whether the store holds anything of the subject under any policy (counted-check.ts). */
  readonly counted: boolean;
  readonly policies: readonly PolicyReport[];
  /** null when the options have no ban (`reset` lifts any ban all the same). */
  readonly ban: BanReport | null;
}

/** The limiters the options make: the one, or one per plan (`plan` picks one). */
export function limitersOf(
  config: HttpConfig<unknown, unknown>,
  plan: string | undefined,
): [string | undefined, Limiter][] {
  if (config.plans === undefined) {
    if (plan !== undefined) throw new CliError('--plan: the options have no plans', ExitCodes.USAGE);
    return [[undefined, config.limiter]];
  }
  const all = [...config.plans.limiters];
  if (plan === undefined) return all;
  const chosen = all.filter(([name]) => name === plan);
  if (chosen.length === 0) {
    throw new CliError(
      `--plan: no plan '${plan}'; the plans are ${all.map(([n]) => n).join(', ')}`,
      ExitCodes.USAGE,
    );
  }
  return chosen;
}

/** Peeks every policy and the ban: charges nothing, changes nothing. */
export async function inspect(
  config: HttpConfig<unknown, unknown>,
  subject: string,
  plan: string | undefined,
  failure: StoreFailure,
): Promise<LimiterReport[]> {
  const now = Date.now();
  const reports: LimiterReport[] = [];
  for (const [planName, limiter] of limitersOf(config, plan)) {
    const decision = await peeked(limiter, subject, failure);
    const ban =
      config.ban === undefined
        ? null
        : banReport(await banCheck(config.ban, config.store, limiter, subject, failure), now);
    reports.push({
      limiter: limiter.name,
      plan: planName ?? null,
      allowed: decision.allowed && ban?.banned !== true,
      retryAfterMs: Math.max(decision.retryAfterMs, ban?.endsInMs ?? 0),
      counted: decision.policies.some(counted) || ban?.banned === true,
      policies: decision.policies.map((p) => ({ ...p, resetAt: new Date(now + p.resetMs).toISOString() })),
      ban,
    });
  }
  return reports;
}

/** What `reset` did: the limiters it reset, and whether a ban was there and is gone. */
export interface ResetReport {
  readonly limiters: string[];
  /** True only when the subject was banned before the reset (the reset lifts it); never a guess. */
  readonly banLifted: boolean;
  /**
   * Whether a subject-scoped policy counted the subject: "reset" was said of subjects looked up under
   * keys the app never wrote (newcomer review 28). A ban found is not enough: ban flags right and
   * --algorithm wrong lifted the ban, left the app's counter full, and the client was banned again.
   */
  readonly counted: boolean;
}

/**
 * Forgets the subject under every limiter the options make; its ban goes with it (limiter.reset).
 * It looks first, as inspect does, so that it can say when there was nothing to reset.
 */
export async function reset(
  config: HttpConfig<unknown, unknown>,
  subject: string,
  plan: string | undefined,
  failure: StoreFailure,
): Promise<ResetReport> {
  const limiters = limitersOf(config, plan);
  let banned = false;
  let anyCounted = false;
  try {
    for (const [, limiter] of limiters) {
      const decision = await peeked(limiter, subject, failure);
      anyCounted ||= decision.policies.some((p) => counted(p) && !sharedBy(limiter, p.name));
      // The ban's own limiters join the limiter's reset when a Ban is made for it, as the app's handler
      // does. Each is checked first: "ban lifted" was said of subjects that were never banned.
      if (config.ban !== undefined)
        banned ||= Ban.banned(await banCheck(config.ban, config.store, limiter, subject, failure));
    }
    // Reset even when nothing was seen: it costs nothing, and covers a request counted since the look.
    await Promise.all(limiters.map(([, limiter]) => steady(() => limiter.reset(subject))));
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(
      `${failure()} (${(error as Error).message}); nothing is known to be reset`,
      ExitCodes.STORE,
    );
  }
  return {
    limiters: limiters.map(([, limiter]) => limiter.name),
    banLifted: banned,
    counted: anyCounted,
  };
}

/** What a request of cost 1 would find, charging nothing; a store that failed is exit 3. */
async function peeked(limiter: Limiter, subject: string, failure: StoreFailure): Promise<Decision> {
  return checked(
    failure,
    await steady(
      () => limiter.peek(subject),
      (d) => d.degraded === true,
    ),
  );
}

/** The subject's ban under the options' ban (a Ban made for the limiter joins its reset, as the app's). */
async function banCheck(
  options: NonNullable<HttpConfig<unknown, unknown>['ban']>,
  store: HttpConfig<unknown, unknown>['store'],
  limiter: Limiter,
  subject: string,
  failure: StoreFailure,
): Promise<Decision> {
  const ban = new Ban(options, limiter, store);
  return checked(
    failure,
    await steady(
      () => Promise.resolve(ban.check(subject)),
      (d) => d.degraded === true,
    ),
  );
}

/** A `scope: 'global'` policy counts every subject together, and reset leaves it alone. */
function sharedBy(limiter: Limiter, policy: string): boolean {
  return limiter.config.policies.some((p) => p.name === policy && p.scope === 'global');
}

function banReport(check: Decision, now: number): BanReport {
  const banned = Ban.banned(check);
  return {
    banned,
    endsInMs: banned ? check.retryAfterMs : 0,
    endsAt: banned ? new Date(now + check.retryAfterMs).toISOString() : null,
  };
}

/** A decision the store did not make (it failed, and a fallback decided) tells the operator nothing. */
/**
 * The command's first call also connects the store's client, which can outlast the app's storeTimeout
 * (a degraded answer from a healthy store, seen 3 times in 13 runs): once more, after a moment, when
 * `failed` says so of the first answer (or it threw).
 */
async function steady<T>(call: () => Promise<T>, failed: (answer: T) => boolean = () => false): Promise<T> {
  try {
    const first = await call();
    if (!failed(first)) return first;
  } catch {
    // Tried again below; a second failure is the command's to report.
  }
  await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_MS));
  return call();
}

const RETRY_AFTER_MS = 500;

function checked(failure: StoreFailure, decision: Decision): Decision {
  if (decision.reason === 'store-error' || decision.degraded === true) {
    throw new CliError(`${failure()}; nothing is known`, ExitCodes.STORE);
  }
  return decision;
}

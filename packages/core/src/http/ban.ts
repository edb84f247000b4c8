import { BAN_POLICY, banNames, STRIKES_POLICY } from '../ban-names.js';
import type { Decision } from '../decision.js';
import { createInternalLimiter, type Limiter, registerCompanions } from '../limiter.js';
import type { Store } from '../stores/store.js';
import type { BanConfig } from './options.js';

/**
 * Bans kept in the limiter's own store, so every process sharing a Redis store sees them. Two
 * internal limiters on that store, named after the guarded one:
 * - `<name>#strikes`: a sliding-log of `after` per `within`, charged once per denial; the denial
 *   that uses its last unit starts the ban;
 * - `<name>#ban`: a gcra of 1 per `for` with a burst of 1. Starting the ban takes its one unit, which
 *   comes back exactly `for` later; checking peeks (charges nothing), so a banned subject's
 *   `retryAfterMs` is the time left in the ban.
 * Both fail open (`onStoreError: 'allow'`): a failing store never bans anyone, and the guarded
 * limiter's own `onStoreError` still decides the request.
 */
export class Ban {
  private readonly strikes: Limiter;
  private readonly marker: Limiter;

  constructor(config: BanConfig, guarded: Limiter, store: Store) {
    const { name, prefix, storeTimeoutMs, denyCacheMs } = guarded.config;
    const names = banNames(name);
    const shared = {
      store,
      prefix,
      storeTimeout: storeTimeoutMs,
      denyCacheMs,
      onStoreError: 'allow' as const,
    };
    this.strikes = createInternalLimiter({
      ...shared,
      name: names.strikes,
      policies: [
        { name: STRIKES_POLICY, limit: config.after, window: config.withinMs, algorithm: 'sliding-log' },
      ],
    });
    this.marker = createInternalLimiter({
      ...shared,
      name: names.marker,
      policies: [{ name: BAN_POLICY, limit: 1, window: config.forMs, algorithm: 'gcra', burst: 1 }],
    });
    // The guarded limiter's reset lifts the ban through these, dropping what they hold in process too.
    registerCompanions(guarded, [this.strikes, this.marker]);
  }

  /** The ban's state for `subject`: `allowed: false` while banned (policy 'ban', retry when it ends). */
  check(subject: string): Decision | Promise<Decision> {
    return this.marker.decide(subject, 1, 'peek');
  }

  /** Whether a check says banned (a store failure never does). */
  static banned(check: Decision): boolean {
    return !check.allowed && check.reason !== 'store-error';
  }

  /**
   * Counts one denial of `subject`, and starts the ban at the `after`-th. Settles once both are in
   * the store (undefined when a local store did it all at once), so a check made after that sees the
   * ban. Never rejects: a strike lost to a store error is a strike not counted.
   */
  strike(subject: string): Promise<void> | undefined {
    const counted = this.strikes.decide(subject, 1, 'consume');
    if (counted instanceof Promise) return counted.then((d) => this.afterStrike(subject, d), ignore);
    return this.afterStrike(subject, counted);
  }

  private afterStrike(subject: string, counted: Decision): Promise<void> | undefined {
    if (counted.allowed && counted.remaining > 0) return undefined;
    if (counted.reason === 'store-error') return undefined;
    // The strikes start over, so a ban that ends does not leave the next denial one strike from
    // another. Sent together with the marker: one round trip more, on the denial that bans only.
    const reset = this.strikes.reset(subject).catch(ignore);
    const started = this.marker.decide(subject, 1, 'consume');
    return started instanceof Promise ? Promise.all([reset, started]).then(ignore, ignore) : undefined;
  }
}

function ignore(): void {}

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
  /** How long a ban lasts, what the denial that starts one tells the client to wait. */
  private readonly forMs: number;

  constructor(config: BanConfig, guarded: Limiter, store: Store) {
    const { name, prefix, storeTimeoutMs, denyCacheMs } = guarded.config;
    const names = banNames(name);
    this.forMs = config.forMs;
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
   * Counts one denial of `subject`, and starts the ban at the `after`-th: gives how long the ban it
   * started lasts (0 when none started), once both are in the store (a plain value when a local store
   * did it all at once), so a check made after that sees the ban. Never rejects: a strike lost to a
   * store error is a strike not counted.
   */
  strike(subject: string): number | Promise<number> {
    const counted = this.strikes.decide(subject, 1, 'consume');
    // Asked with the strike (one round trip on a remote store): a ban that a concurrent denial started
    // after this request's check, which this denial must report too.
    const running = this.check(subject);
    if (counted instanceof Promise || running instanceof Promise) {
      return Promise.all([counted, running]).then(([c, r]) => this.afterStrike(subject, c, r), none);
    }
    return this.afterStrike(subject, counted, running);
  }

  private afterStrike(subject: string, counted: Decision, running: Decision): number | Promise<number> {
    const left = Ban.banned(running) ? running.retryAfterMs : 0;
    if ((counted.allowed && counted.remaining > 0) || counted.reason === 'store-error') return left;
    const started = this.marker.decide(subject, 1, 'consume');
    if (!(started instanceof Promise)) {
      this.startOver(subject);
      return Math.max(left, this.lasts(started));
    }
    // Two round trips more, on the denial that bans only: the strikes start over once the ban is in
    // the store, not before, or a denial counted in between would find neither full strikes nor a ban.
    return started.then((s) => this.startOver(subject).then(() => Math.max(left, this.lasts(s))), none);
  }

  /** The strikes start over, so a ban that ends does not leave the next denial one strike from another. */
  private startOver(subject: string): Promise<void> {
    return this.strikes.reset(subject).catch(ignore);
  }

  /**
   * How long the ban lasts once `started` tried to take its marker: its whole length when it took it,
   * the time left in one already running when it did not, 0 when a store error let it be.
   */
  private lasts(started: Decision): number {
    if (started.allowed) return started.degraded === true ? 0 : this.forMs;
    return Ban.banned(started) ? started.retryAfterMs : 0;
  }
}

function none(): number {
  return 0;
}

function ignore(): void {}

/**
 * One request in, one answer out: what every adapter calls. Framework-free; an adapter only
 * translates its request and response to and from these values.
 *
 * How an adapter uses it:
 *
 * 1. Once, when the user creates the middleware or plugin:
 *    `const http = createHttpHandler(options, reader)`. Every option is parsed and checked here
 *    (a `SluiceConfigError` is thrown at once for anything wrong, never on a request).
 *    `reader` is a {@link RequestReader}: how to read the client IP, a header and a query parameter.
 *    Remove the adapter's own options (Fastify `global`, `hook`) first: any other key is an error.
 *
 * 2. Per request: `const outcome = http.handle(req)`. It never throws. It returns the
 *    {@link HttpOutcome} itself when everything was decided in process (MemoryStore and no user
 *    callback that returned a promise: no promise per request), or a promise of it. Test with
 *    `outcome instanceof Promise`. The promise rejects only with an error thrown (or rejected) by a
 *    user callback (`subject`, `verify`, `cost`, `skip`, `allowList`, `denyList`, `onDecision`) or by a
 *    store without a fallback: pass it to the framework's error handling (Express `next(err)`,
 *    Fastify `done(err)` / throw). Nothing was left charged or leased in that case.
 *
 * 3. With the outcome:
 *    - Put `outcome.decision` (when defined) on the request: `req.rateLimit` / `request.rateLimit`.
 *    - Set every entry of `outcome.headers` on the response (names as written, values as strings),
 *      whether the request passes or is blocked.
 *    - `outcome.pass === true`: continue to the route. If `outcome.delayMs > 0` (leaky bucket with
 *      delay), hold the request that many ms first; if the client disconnects while held, do not
 *      continue (but still call `finish(0)`, see below).
 *    - `outcome.pass === false`: answer now with `outcome.status` (429 or the `statusCode` option for
 *      a policy denial, 403 for `denyList` and `ban`, 503 for `onStoreError: 'deny'`). If
 *      `outcome.handler` is defined (the user's `handler` option; given for every refusal: 429, 403, 503),
 *      call `outcome.handler(req, res, outcome.decision!)` after setting the headers and let it answer
 *      (errors it throws go to the framework's error handling); once it returned (or resolved) without
 *      answering, answer as below and warn `ERR_SLUICE_HANDLER_NO_ANSWER` (`http.warn`). Otherwise send
 *      `outcome.body` (a JSON string) with `Content-Type: application/problem+json` (the value of
 *      {@link PROBLEM_CONTENT_TYPE}).
 *
 * 4. `outcome.finish`, when defined, must be called exactly once (extra calls are ignored) when the
 *    handler has ended the response: `statusCode` = the status it sent, or 0 when the client had left
 *    before (the handler ran, so nothing is refunded; the lease ends). Not when the client leaves: a
 *    lease held until the handler is done keeps aborted requests from running more than `limit`
 *    handlers at once. It releases concurrency leases and does the `skipFailedRequests` /
 *    `skipSuccessfulRequests` refunds; it never throws and never rejects (store errors there are
 *    swallowed: the lease then expires by itself). When `finish` is undefined nothing needs doing after
 *    the response: do not attach listeners (the fast path). A blocked outcome never has a `finish`.
 *
 * 5. A decision that comes back after the response is over (another middleware answered while the
 *    store was slow, or the client left) must give back what it charged and do nothing else; so must
 *    the outcome of a client gone before its decision (`pass` false with `status` 0: nothing was
 *    charged). `abandonIfLate` in ./adapter.ts tells both; adapters ask it on every path.
 *
 * On Node's http objects (Express, Fastify), ./adapter.ts does the framework-free parts of 3 and 4:
 * `frameworkReader` reads `req.ip`/`headers`/`query`, `passOn` holds and continues a passing outcome
 * and calls `finish`, `callHandler` runs the user's handler with its errors routed.
 *
 * The order per request: `skip`; the subject; `allowList`; `denyList`; `cost`; the ban check; the
 * limiter; `onDecision` (every limiter and ban decision; not called for skipped, allow-listed or
 * deny-listed requests). With `shadow`, no outcome is ever blocked (`denyList` and `ban` included).
 * With `ban`, a denial's strike (and the ban it may start) is in the store before its outcome is
 * given, so the ban holds for the subject's very next request, in every process.
 *
 * `http.limiter` is the limiter in use (built from the options, or the `limiter` option), e.g. for
 * `reset(subject)`; `http.subjectOf(req)` resolves the subject exactly as `handle` does (the key the
 * limiter sees, e.g. `'ip:203.0.113.7'`; credentials appear only hashed).
 */
import { BAN_POLICY } from '../ban-names.js';
import type { Decision } from '../decision.js';
import { decisionChannel, publishDecision } from '../diagnostics.js';
import { describeValue, ErrorCodes } from '../errors.js';
import { announceDecision, type Limiter } from '../limiter.js';
import type { Store } from '../stores/store.js';
import { Ban } from './ban.js';
import { type HeaderWriter, headerWriter, recordDecisionTime, retryAfterSeconds } from './headers.js';
import { clientAddress, quoted } from './ip.js';
import { type ListConfig, listHolds } from './lists.js';
import { type HttpConfig, parseHttpOptions } from './options.js';
import { isPrivateAddress } from './private-proxies.js';
import { bannedBody, deniedBody, limitedBody, ProblemBodies, storeErrorBody } from './responses.js';
import { countHandler, mayStack, stack } from './stacking.js';
import { type Identity, isThenable, SubjectResolver } from './subject.js';
import type { HttpOptions, RequestReader } from './types.js';
import { currentTurn, madeForRequest, type WarningCode, WarningCodes, Warnings } from './validate.js';

/** The Content-Type of every body Sluice sends (RFC 9457). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** What to do with one request. Plain data; see the module comment for how an adapter uses it. */
export interface HttpOutcome<Req = unknown, Res = unknown> {
  /** true: continue to the route (after `delayMs`); false: answer with `status` now. */
  readonly pass: boolean;
  /** The status to answer with when blocked (429/`statusCode`, 403, 503); 0 when passing. */
  readonly status: number;
  /** Header fields to set on the response in either case; names in their canonical case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The problem+json body (a JSON string) when blocked; undefined when passing. */
  readonly body: string | undefined;
  /** The decision for `req.rateLimit` and `onDecision`; undefined when skipped or allow-listed. */
  readonly decision: Decision | undefined;
  /** How long to hold a passing request before continuing (leaky bucket with delay); else 0. */
  readonly delayMs: number;
  /** Call once when the response finishes (its status) or the connection closes first (0). */
  readonly finish: ((statusCode: number) => void) | undefined;
  /** The user's `handler`, on every blocked outcome when one was given: answer with it instead of `body`. */
  readonly handler: ((req: Req, res: Res, decision: Decision) => void) | undefined;
}

/** The parsed HTTP options and the limiter behind them. */
export interface HttpHandler<Req, Res = unknown> {
  readonly limiter: Limiter;
  /** Decides one request. Never throws; see the module comment. */
  handle(req: Req): HttpOutcome<Req, Res> | Promise<HttpOutcome<Req, Res>>;
  /** The subject `handle` would use for this request (kind-prefixed, credentials hashed). */
  subjectOf(req: Req): string | Promise<string>;
  /**
   * Emits a validation warning of this limiter (once, unless `validate` turned it off): for adapters'
   * own checks. Whether it is out (now or before): false when turned off.
   */
  warn(code: WarningCode, detail?: string): boolean;
  /** Forgets the subject this request maps to (under every plan), and lifts its ban. */
  reset(req: Req): Promise<void>;
}

/** Requests each handler looks at for the validation warnings that only a request shows. */
const WATCHED_REQUESTS = 1000;
/** Requests limited as `ip:unknown` before ERR_SLUICE_NO_CLIENT_ADDRESS (one is a closed socket). */
const ADDRESSLESS_REQUESTS = 3;

/** Parses `options` once (throwing SluiceConfigError for anything wrong) and returns the handler. */
export function createHttpHandler<Req, Res = unknown>(
  options: HttpOptions<Req, Res>,
  reader: RequestReader<Req>,
  /** The adapter's own options at this place (removed from `options`), listed when an option is unknown. */
  adapterKeys: readonly string[] = [],
  /**
   * `kept`: the adapter builds this handler on a first request and keeps it (NestJS per-handler
   * limits), so it is never one made per request (ERR_SLUICE_CREATED_PER_REQUEST).
   */
  { kept = false }: { kept?: boolean } = {},
): HttpHandler<Req, Res> {
  const config = parseHttpOptions(options, adapterKeys);
  return config.plans === undefined
    ? new Handler<Req, Res>(config, reader, kept)
    : new PlanHandler(config, reader, kept);
}

/** What a request's `plan` returned when it names no plan: passed on as the framework's error. */
export class UnknownPlanError extends Error {
  override readonly name = 'UnknownPlanError';
  readonly code = ErrorCodes.UNKNOWN_PLAN;
}

/**
 * `plans` + `plan`: a Handler per plan, each with the plan's limiter (and so its own policies in the
 * headers and one store round trip per decision); `plan(req)` picks one per request.
 */
class PlanHandler<Req, Res> implements HttpHandler<Req, Res> {
  readonly limiter: Limiter;
  private readonly handlers = new Map<string, Handler<Req, Res>>();
  private readonly first: Handler<Req, Res>;

  constructor(
    private readonly config: HttpConfig<Req, Res>,
    reader: RequestReader<Req>,
    kept: boolean,
  ) {
    for (const [name, limiter] of config.plans!.limiters) {
      this.handlers.set(name, new Handler({ ...config, limiter, plans: undefined }, reader, kept));
    }
    this.first = this.handlers.values().next().value!;
    this.limiter = this.first.limiter;
  }

  handle(req: Req): Maybe<Outcome<Req, Res>> {
    try {
      const name = this.config.plans!.pick(req);
      if (isThenable(name)) return Promise.resolve(name).then((n) => this.of(n).handle(req));
      return this.of(name).handle(req);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private of(name: unknown): Handler<Req, Res> {
    const handler = typeof name === 'string' ? this.handlers.get(name) : undefined;
    if (handler !== undefined) return handler;
    throw new UnknownPlanError(
      `plan returned ${describeValue(name)}, which names no plan; the plans are ${[...this.handlers.keys()].join(', ')}`,
    );
  }

  subjectOf(req: Req): Maybe<string> {
    return this.first.subjectOf(req);
  }

  /** The subject's counts under every plan (a client may have changed plans since). */
  async reset(req: Req): Promise<void> {
    const subject = await this.subjectOf(req);
    await Promise.all([...this.handlers.values()].map((h) => h.limiter.reset(subject)));
  }

  warn(code: WarningCode, detail?: string): boolean {
    return this.first.warn(code, detail);
  }
}

type Outcome<Req, Res> = HttpOutcome<Req, Res>;
type Maybe<T> = T | Promise<T>;

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** Passed on untouched: skipped or allow-listed. */
const UNLIMITED: HttpOutcome<never, never> = Object.freeze({
  pass: true,
  status: 0,
  headers: NO_HEADERS,
  body: undefined,
  decision: undefined,
  delayMs: 0,
  finish: undefined,
  handler: undefined,
});

/**
 * The client had gone (its connection closed) before the decision: nothing was charged, and the adapter
 * neither answers nor continues (`abandonIfLate` says so). Told apart by `pass: false` with no status.
 */
const GONE: HttpOutcome<never, never> = Object.freeze({ ...UNLIMITED, pass: false });

/** Whether `outcome` is the one of a client gone before its decision. */
export function isGone(outcome: Pick<HttpOutcome, 'pass' | 'status'>): boolean {
  return !outcome.pass && outcome.status === 0;
}

function blocked<Req, Res>(
  status: number,
  headers: Record<string, string>,
  body: string,
  decision: Decision | undefined,
  handler: Outcome<Req, Res>['handler'],
): Outcome<Req, Res> {
  return {
    pass: false,
    status,
    headers,
    body,
    decision,
    delayMs: 0,
    finish: undefined,
    handler,
  };
}

/** The denyList answer's body: always the same. */
const DENIED_BODY = JSON.stringify(deniedBody());

/**
 * The decision of a deny-listed request, for `handler` and `req.rateLimit`: refused for good (no
 * retry time, so no Retry-After), by no policy of the limiter.
 */
function denyListed(): Decision {
  return {
    allowed: false,
    limit: 0,
    remaining: 0,
    resetMs: 0,
    retryAfterMs: Number.POSITIVE_INFINITY,
    policy: 'deny-list',
    policies: [],
    reason: 'deny-list',
  };
}

/**
 * The clock to read just before a decision, for X-RateLimit-Reset: the store's own when it reads one
 * in process, so the reading is at or before the store's (the same one, for a MemoryStore's shared
 * reading) and a reset on a whole second is read as that second. A store that keeps its clock
 * elsewhere (Redis TIME): this process's, at the moment the store is asked, before its answer.
 */
function decisionClock(store: Store): () => number {
  const { clock } = store;
  return clock === undefined ? Date.now : () => clock.call(store);
}

/** A promise's rejection is ignored: refunds and releases that fail leave the lease to expire. */
function ignore(): void {}

/**
 * The per-request flow, in order: skip; subject; allowList; denyList; cost; ban check; the limiter;
 * onDecision; the answer. Every step stays synchronous until something returns a promise, so with a
 * MemoryStore and synchronous callbacks a request costs no promise.
 */
class Handler<Req, Res> implements HttpHandler<Req, Res> {
  readonly limiter: Limiter;
  private readonly resolver: SubjectResolver<Req>;
  private readonly writeHeaders: HeaderWriter | undefined;
  /** With legacy fields: the clock read before each decision (see decisionClock). */
  private readonly clock: (() => number) | undefined;
  private readonly ban: Ban | undefined;
  /** Whether an allowed decision ever needs a `finish`: refunds after the response. */
  private readonly refunds: boolean;
  /** The JSON bodies of 429 (or `statusCode`), ban and store-error answers. */
  private readonly limitedBodies: ProblemBodies;
  private readonly bannedBodies = new ProblemBodies((_, retryAfterMs) => bannedBody(retryAfterMs));
  private readonly storeErrorBodies = new ProblemBodies((policy) => storeErrorBody(policy));
  private readonly warnings: Warnings;
  /** While true, requests are looked at for the validation warnings (the first WATCHED_REQUESTS). */
  private watching: boolean;
  private watched = 0;
  private forwardedSeen = false;
  /** A public peer was trusted as a proxy by hop count (ERR_SLUICE_TRUST_PROXY_PUBLIC told). */
  private publicHopSeen = false;
  /** Requests limited by address that had none, among the watched ones. */
  private addressless = 0;
  private readonly recent = new WeakSet<object>();
  /** The default subject and no lists: the address is the subject, with no Identity to build or screen. */
  private readonly byAddress: boolean;
  /**
   * The event loop's turn this handler was made in (ERR_SLUICE_CREATED_PER_REQUEST); -1 for one an
   * adapter builds on a first request and keeps.
   */
  private readonly madeIn: number;
  /** The apps (Express app, Fastify instance) whose trust-proxy setting this handler checked. */
  private readonly apps = new WeakSet<object>();

  constructor(
    private readonly config: HttpConfig<Req, Res>,
    private readonly reader: RequestReader<Req>,
    kept = false,
  ) {
    this.limiter = config.limiter;
    this.resolver = new SubjectResolver(config.subject, reader, {
      addressless: () => {
        if (this.watching && ++this.addressless === ADDRESSLESS_REQUESTS)
          this.warnings.warn(WarningCodes.NO_CLIENT_ADDRESS);
      },
      notAnAddress: (ip) => this.warnings.warn(WarningCodes.NOT_AN_ADDRESS, quoted(ip)),
    });
    this.writeHeaders = headerWriter(config.headers, config.legacyHeaders, config.limiter.policies);
    this.clock = config.legacyHeaders ? decisionClock(config.store) : undefined;
    this.ban = config.ban === undefined ? undefined : new Ban(config.ban, config.limiter, config.store);
    this.refunds = config.skipFailedRequests || config.skipSuccessfulRequests;
    this.limitedBodies = new ProblemBodies((policy, retryAfterMs) =>
      limitedBody(config.statusCode, policy, retryAfterMs),
    );
    countHandler();
    this.warnings = new Warnings(config.validate, config.limiter.name);
    this.watching = this.warnings.on;
    const { sources, verify } = config.subject;
    this.byAddress =
      sources.length === 1 &&
      sources[0] === 'ip' &&
      config.allowList === undefined &&
      config.denyList === undefined;
    if (verify === undefined && sources.some((s) => s === 'api-key' || s === 'token')) {
      this.warnings.warn(WarningCodes.UNVERIFIED_CREDENTIAL);
    }
    this.madeIn = kept ? -1 : currentTurn();
  }

  warn(code: WarningCode, detail?: string): boolean {
    return this.warnings.warn(code, detail);
  }

  async reset(req: Req): Promise<void> {
    await this.limiter.reset(await this.subjectOf(req));
  }

  /** The validation warnings only a request can show: a proxy ignored or trusted blindly, a double count, no address. */
  private watch(req: Req): void {
    const app = this.reader.app?.(req);
    // An Express app is a function.
    const known = (typeof app === 'object' || typeof app === 'function') && app !== null;
    if (known && this.watched === 0 && this.madeIn === currentTurn())
      madeForRequest(app, this.limiter.name, this.warnings);
    // Every app the handler serves (one middleware may be mounted on several, or on a sub-app with a
    // setting of its own); a warning never costs a request: an app whose setting cannot be read is left.
    if (known && !this.apps.has(app)) {
      this.apps.add(app);
      try {
        this.reader.checkApp?.(app, this);
      } catch {}
    }
    if (++this.watched >= WATCHED_REQUESTS) this.watching = false;
    if (typeof req === 'object' && req !== null) {
      if (this.recent.has(req)) this.warnings.warn(WarningCodes.DOUBLE_COUNT);
      else this.recent.add(req);
    }
    if (this.forwardedSeen && this.publicHopSeen) return;
    const { reader } = this;
    if ((reader.header(req, 'x-forwarded-for') ?? reader.header(req, 'forwarded')) === undefined) return;
    const ip = reader.ip(req);
    const peer = reader.peer?.(req);
    if (!this.forwardedSeen) {
      this.forwardedSeen = true;
      // A public peer whose header is ignored while some proxies are trusted is a client writing its
      // own: telling the app to trust it would be the wrong fix.
      if (
        ip !== undefined &&
        ip === peer &&
        (isPrivateAddress(peer) || (reader.trust?.(req) ?? 'none') === 'none')
      ) {
        this.warnings.warn(WarningCodes.FORWARDED_IGNORED);
      }
      if (reader.trustsAnyProxy?.(req) === true) this.warnings.warn(WarningCodes.TRUST_PROXY_ALL);
    }
    // On every watched request: the first proxied ones may well come through a proxy of your own.
    // Trust by address is left alone: a CDN's published ranges are public and rightly trusted.
    if (
      ip !== undefined &&
      peer !== undefined &&
      ip !== peer &&
      !isPrivateAddress(peer) &&
      reader.trust?.(req) === 'count'
    ) {
      this.publicHopSeen = true;
      this.warnings.warn(WarningCodes.TRUST_PROXY_PUBLIC, peer);
    }
  }

  handle(req: Req): Maybe<Outcome<Req, Res>> {
    try {
      if (this.watching) this.watch(req);
      const { skip } = this.config;
      if (skip === undefined) return this.identify(req);
      const skipped = skip(req);
      if (isThenable(skipped)) {
        return Promise.resolve(skipped).then((s) =>
          s ? (UNLIMITED as Outcome<Req, Res>) : this.identify(req),
        );
      }
      return skipped ? (UNLIMITED as Outcome<Req, Res>) : this.identify(req);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  subjectOf(req: Req): Maybe<string> {
    try {
      const id = this.resolver.resolve(req);
      return isThenable(id) ? Promise.resolve(id).then((i) => i.subject) : id.subject;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private identify(req: Req): Maybe<Outcome<Req, Res>> {
    if (this.byAddress) return this.charge(req, this.resolver.ipSubject(req));
    const id = this.resolver.resolve(req);
    if (isThenable(id)) return Promise.resolve(id).then((i) => this.screen(req, i));
    return this.screen(req, id);
  }

  /** allowList, then denyList. */
  private screen(req: Req, id: Identity): Maybe<Outcome<Req, Res>> {
    const { allowList, denyList } = this.config;
    if (allowList !== undefined) {
      const allowed = this.listed(allowList, req, id);
      if (isThenable(allowed)) {
        return Promise.resolve(allowed).then((a) =>
          a ? (UNLIMITED as Outcome<Req, Res>) : this.deny(req, id),
        );
      }
      if (allowed) return UNLIMITED as Outcome<Req, Res>;
    }
    return denyList === undefined ? this.charge(req, id.subject) : this.deny(req, id);
  }

  private deny(req: Req, id: Identity): Maybe<Outcome<Req, Res>> {
    const { denyList } = this.config;
    if (denyList === undefined) return this.charge(req, id.subject);
    const denied = this.listed(denyList, req, id);
    if (isThenable(denied)) return Promise.resolve(denied).then((d) => this.afterDeny(req, id, Boolean(d)));
    return this.afterDeny(req, id, Boolean(denied));
  }

  private afterDeny(req: Req, id: Identity, denied: boolean): Maybe<Outcome<Req, Res>> {
    if (!denied) return this.charge(req, id.subject);
    if (this.config.shadow) return UNLIMITED as Outcome<Req, Res>;
    const decision = denyListed();
    if (decisionChannel.hasSubscribers) publishDecision(this.limiter.name, decision);
    return blocked(403, {}, DENIED_BODY, decision, this.config.handler);
  }

  /** Address entries match the client address, other entries the subject; functions are asked. */
  private listed(list: ListConfig<Req>, req: Req, id: Identity): unknown {
    const ip = this.reader.ip(req);
    if (list.test !== undefined) return list.test(req, id.listed ?? (ip && clientAddress(ip, false)));
    return listHolds(list, ip, id.listed);
  }

  private charge(req: Req, subject: string): Maybe<Outcome<Req, Res>> {
    const { cost } = this.config;
    if (typeof cost === 'number') return this.decide(req, subject, cost);
    const units = cost(req);
    if (isThenable(units)) return Promise.resolve(units).then((u) => this.decide(req, subject, checkCost(u)));
    return this.decide(req, subject, checkCost(units));
  }

  private decide(req: Req, subject: string, cost: number): Maybe<Outcome<Req, Res>> {
    // A client gone before its decision (a reset while other middleware or a callback ran) is charged
    // nothing and never reaches the handler, whichever path got it here.
    if (this.reader.gone?.(req) === true) return GONE as Outcome<Req, Res>;
    const { ban } = this;
    if (ban === undefined) {
      const at = this.clock?.();
      const decision = this.limiter.decide(subject, cost, 'consume');
      if (decision instanceof Promise) return decision.then((d) => this.answer(req, subject, d, at));
      return this.answer(req, subject, decision, at);
    }
    const check = ban.check(subject);
    if (!(check instanceof Promise)) {
      if (Ban.banned(check)) return this.banned(req, check);
      const at = this.clock?.();
      const decision = this.limiter.decide(subject, cost, 'consume');
      if (decision instanceof Promise) return decision.then((d) => this.answer(req, subject, d, at));
      return this.answer(req, subject, decision, at);
    }
    // A store that answers remotely: the check and the decision go out together (one round trip of
    // latency, pipelined); a banned subject's charge is given back.
    const at = this.clock?.();
    return Promise.all([check, this.limiter.decide(subject, cost, 'consume')]).then(([c, d]) => {
      if (!Ban.banned(c)) return this.answer(req, subject, d, at);
      if (d.allowed) d.refund?.().catch(ignore);
      return this.banned(req, c);
    });
  }

  private banned(req: Req, check: Decision): Outcome<Req, Res> {
    check.reason = 'ban';
    if (decisionChannel.hasSubscribers) publishDecision(this.limiter.name, check);
    this.report(req, check);
    if (this.config.shadow) return this.passed(check, NO_HEADERS);
    const headers: Record<string, string> = {};
    const retryAfter = retryAfterSeconds(check.retryAfterMs);
    if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
    const body = this.bannedBodies.json(BAN_POLICY, check.retryAfterMs);
    return blocked(403, headers, body, check, this.config.handler);
  }

  /**
   * A denial's strike is recorded before the denial is answered, so a ban it starts holds for the very
   * next request, in every process (a remote store: one more round trip, on denials only); and the
   * denial that starts one says so to `onDecision`, the channels and the client: its retry time runs
   * to the ban's end (API.md r3).
   */
  private answer(
    req: Req,
    subject: string,
    decision: Decision,
    at: number | undefined,
  ): Maybe<Outcome<Req, Res>> {
    const { ban } = this;
    if (ban === undefined || decision.allowed || decision.reason === 'store-error')
      return this.answered(req, decision, at);
    const struck = ban.strike(subject);
    if (!(struck instanceof Promise)) return this.answered(req, banFor(decision, struck), at);
    return struck.then((banMs) => this.answered(req, banFor(decision, banMs), at));
  }

  /** `at`: the decision clock's reading just before the decision, when legacy fields are sent. */
  private answered(req: Req, decision: Decision, at: number | undefined): Outcome<Req, Res> {
    if (decisionChannel.hasSubscribers) announceDecision(this.limiter, decision);
    this.report(req, decision);
    const { config } = this;
    if (decision.reason === 'store-error' && !decision.allowed) {
      if (config.shadow) return this.passed(decision, NO_HEADERS);
      return blocked(
        503,
        { 'Retry-After': '1' },
        this.storeErrorBodies.json(decision.policy, decision.retryAfterMs),
        decision,
        config.handler,
      );
    }
    const headers: Record<string, string> = {};
    if (at !== undefined) recordDecisionTime(decision, at);
    if (this.writeHeaders !== undefined) {
      this.writeHeaders(decision, headers);
      const previous = mayStack() ? this.reader.previous?.(req) : undefined;
      if (previous !== undefined)
        stack(req as object, previous, config.headers, decision, headers, this.writeHeaders);
    }
    if (decision.allowed) return this.passed(decision, headers);
    return this.limited(decision, headers);
  }

  private limited(decision: Decision, headers: Record<string, string>): Outcome<Req, Res> {
    const { config } = this;
    if (config.shadow) return this.passed(decision, headers);
    const retryAfter = retryAfterSeconds(decision.retryAfterMs);
    if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
    return blocked(
      config.statusCode,
      headers,
      this.limitedBodies.json(decision.policy, decision.retryAfterMs),
      decision,
      config.handler,
    );
  }

  /** onDecision; when it throws, what the decision holds is given back before the error goes on. */
  private report(req: Req, decision: Decision): void {
    const { onDecision } = this.config;
    if (onDecision === undefined) return;
    try {
      const done = onDecision(req, decision);
      if (isThenable(done)) Promise.resolve(done).catch(this.onDecisionFailed);
    } catch (error) {
      (decision.release ?? decision.refund)?.().catch(ignore);
      throw error;
    }
  }

  /** An asynchronous onDecision that failed: reported once per limiter, never an unhandled rejection. */
  private readonly onDecisionFailed = (error: unknown): void => {
    this.warnings.warn(
      WarningCodes.ON_DECISION_FAILED,
      error instanceof Error ? error.message : describeValue(error),
    );
  };

  private passed(decision: Decision, headers: Record<string, string>): Outcome<Req, Res> {
    return {
      pass: true,
      status: 0,
      headers,
      body: undefined,
      decision,
      delayMs: decision.delayMs ?? 0,
      finish: this.finisher(decision),
      handler: undefined,
    };
  }

  /** What to do once the response is over: a refund if skip*Requests says so, else the lease back. */
  private finisher(decision: Decision): ((statusCode: number) => void) | undefined {
    const { refund, release } = decision;
    if (release === undefined && !(this.refunds && refund !== undefined)) return undefined;
    const { skipFailedRequests, skipSuccessfulRequests } = this.config;
    let done = false;
    return (statusCode) => {
      if (done) return;
      done = true;
      // 0: the client left before the handler ended the response. The handler ran all the same, so
      // nothing is refunded (a client aborting every request would run it for free); the lease ends.
      const refunding = statusCode > 0 && (statusCode < 400 ? skipSuccessfulRequests : skipFailedRequests);
      // A refund gives back every policy's charge, the lease included.
      const giveBack = refunding ? refund : release;
      giveBack?.().catch(ignore);
    };
  }
}

/**
 * A denial that started a ban of `banMs`: the same call is allowed again only once the ban ends, and
 * its denying policies reset no sooner (a denying policy's resetMs is at least the retry: API.md r2),
 * so the RateLimit fields agree with Retry-After. A copy: a store may hand the same denial out again
 * (the deny cache).
 */
function banFor(decision: Decision, banMs: number): Decision {
  if (banMs <= decision.retryAfterMs) return decision;
  const later = (resetMs: number) => Math.max(resetMs, banMs);
  return {
    ...decision,
    retryAfterMs: banMs,
    resetMs: later(decision.resetMs),
    policies: decision.policies.map((p) => (p.allowed ? p : { ...p, resetMs: later(p.resetMs) })),
  };
}

function checkCost(units: unknown): number {
  if (typeof units !== 'number' || !Number.isSafeInteger(units) || units <= 0) {
    throw new TypeError(`the cost option returned ${String(units)}; expected a positive integer`);
  }
  return units;
}

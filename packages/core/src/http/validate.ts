import { describeValue, ErrorCodes } from '../errors.js';
import { fail } from '../options.js';
import { emitWarning } from '../portable/runtime.js';

/**
 * One-time warnings (the `validate` option) for deployments that would limit the wrong thing: each
 * says what is wrong, what it does to the limit, and the fix, once per limiter, through
 * `process.emitWarning` (type `SluiceWarning`). Never thrown: the app runs as configured.
 */
export const WarningCodes = {
  FORWARDED_IGNORED: 'ERR_SLUICE_FORWARDED_IGNORED',
  TRUST_PROXY_ALL: 'ERR_SLUICE_TRUST_PROXY_ALL',
  TRUST_PROXY_IGNORED: 'ERR_SLUICE_TRUST_PROXY_IGNORED',
  TRUST_PROXY_PUBLIC: 'ERR_SLUICE_TRUST_PROXY_PUBLIC',
  UNVERIFIED_CREDENTIAL: 'ERR_SLUICE_UNVERIFIED_CREDENTIAL',
  DOUBLE_COUNT: 'ERR_SLUICE_DOUBLE_COUNT',
  CREATED_PER_REQUEST: 'ERR_SLUICE_CREATED_PER_REQUEST',
  UNLIMITED_ROUTES: 'ERR_SLUICE_UNLIMITED_ROUTES',
  NO_CLIENT_ADDRESS: 'ERR_SLUICE_NO_CLIENT_ADDRESS',
  NOT_AN_ADDRESS: 'ERR_SLUICE_NOT_AN_ADDRESS',
  ON_DECISION_FAILED: 'ERR_SLUICE_ON_DECISION_FAILED',
  UNLIMITED_CONTEXT: 'ERR_SLUICE_UNLIMITED_CONTEXT',
  HANDLER_NO_ANSWER: 'ERR_SLUICE_HANDLER_NO_ANSWER',
} as const;

export type WarningCode = (typeof WarningCodes)[keyof typeof WarningCodes];

const CODES: ReadonlySet<string> = new Set(Object.values(WarningCodes));

const MESSAGES: Record<WarningCode, (limiter: string, detail: string) => string> = {
  ERR_SLUICE_FORWARDED_IGNORED: (l) =>
    `Limiter "${l}" saw a request that came through a proxy (X-Forwarded-For or Forwarded) but is given the proxy's address: the framework trusts no proxy, so every client behind it shares one limit. Fix: trust your proxies by address (Express: app.set('trust proxy', 'loopback, linklocal, uniquelocal') or their addresses; Fastify: trustProxy: ['<proxy address or range>']; Koa and Hono: getIp: privateProxyIp).`,
  ERR_SLUICE_TRUST_PROXY_ALL: (l) =>
    `Limiter "${l}" runs behind trust proxy = true: any client can pick its own address with X-Forwarded-For, and so a fresh limit per request. Fix: trust only your proxies, by address (Express: 'loopback, linklocal, uniquelocal' or their addresses; Koa: app.proxy off and getIp: privateProxyIp).`,
  ERR_SLUICE_TRUST_PROXY_IGNORED: (l, detail) =>
    `Limiter "${l}": ${detail} is not applied to X-Forwarded-For by this Fastify (5.12.1 and later), so every client behind the proxy shares one limit. Fix: trustProxy: ['<proxy address or range>'].`,
  ERR_SLUICE_TRUST_PROXY_PUBLIC: (l, detail) =>
    `Limiter "${l}" took a client address from X-Forwarded-For on a connection from ${detail}, a public address, trusted as a proxy by a hop count (or trust proxy = true): a client that reaches this server directly writes its own address, and gets a fresh limit per request. Fix: trust proxies by address (Express: app.set('trust proxy', 'loopback, linklocal, uniquelocal') for proxies on your private network, or your CDN's published ranges; Fastify: trustProxy with those addresses; Koa: leave app.proxy off and pass getIp: privateProxyIp).`,
  ERR_SLUICE_UNVERIFIED_CREDENTIAL: (l) =>
    `Limiter "${l}" limits by API key or token without verify: a client can mint a fresh quota per request by inventing keys. Fix: pass verify (credential => subject or null), or back the limit with an IP limit.`,
  ERR_SLUICE_DOUBLE_COUNT: (l) =>
    `Limiter "${l}" ran twice on one request, so each request is charged twice. Fix: apply it once (app-wide or on the route, not both).`,
  ERR_SLUICE_CREATED_PER_REQUEST: (l) =>
    `Rate limiters named "${l}" are being created per request (inside a handler): each starts empty and never limits anything. Fix: create them once, at start-up.`,
  ERR_SLUICE_NO_CLIENT_ADDRESS: (l) =>
    `Limiter "${l}" was given no client address for its first requests: they all count as one client, ip:unknown. Fix: off @hono/node-server (Bun, Deno, Workers), pass a getIp that returns every request's address; elsewhere, make the framework give it (req.ip).`,
  ERR_SLUICE_NOT_AN_ADDRESS: (l, detail) =>
    `Limiter "${l}" was given the client address ${detail}, which is no IP address (an address with a port, ':51000' or '[…]:443', is taken as that address): each such value is limited as a client of its own. Fix: make the framework (or getIp) give the client's IP address, e.g. trust only your own proxies so that X-Forwarded-For is read as they write it.`,
  ERR_SLUICE_ON_DECISION_FAILED: (l, detail) =>
    `Limiter "${l}": an asynchronous onDecision failed (${detail}); later failures are not reported. The decisions stand. Fix: catch errors inside onDecision.`,
  ERR_SLUICE_UNLIMITED_ROUTES: (l, detail) =>
    `Limiter "${l}" never saw ${detail}, declared before the plugin or outside its scope: they are not limited. Fix: register the plugin first and await it, in the scope of the routes: await app.register(sluice, { ... }) before app.get(...); without await, routes declared right after it are added before the plugin runs.`,
  ERR_SLUICE_UNLIMITED_CONTEXT: (l, detail) =>
    `Limiter "${l}" guards ${detail}, which carries no HTTP request and response to limit by: it is let through, unlimited. Fix: limit it where it enters (the transport's own limits, or the HTTP route), or for GraphQL over Fastify give the driver context: (req, reply) => ({ req, reply }); @SkipRateLimit() on it says it is meant to be unlimited and silences this warning.`,
  ERR_SLUICE_HANDLER_NO_ANSWER: (l) =>
    `Limiter "${l}": its handler returned without answering the refusal (a body returned, as errorResponseBuilder's was, is not sent), so Sluice sent its own problem+json refusal. Fix: answer in the handler, e.g. handler: (req, res, decision) => res.status(429).json({ ... }) (Fastify: reply.send(...); Koa: ctx.body = ...; Hono: return c.json(...)), and return its promise if it answers later.`,
};

/**
 * express-rate-limit's `validate` keys by its check names; Sluice's by code. Pasted unchanged, a key
 * said only "unknown check": these name the Sluice check that does that job (or that none does).
 */
const EXPRESS_RATE_LIMIT_CHECKS: Readonly<Record<string, readonly WarningCode[]>> = {
  xForwardedForHeader: [WarningCodes.FORWARDED_IGNORED],
  forwardedHeader: [WarningCodes.FORWARDED_IGNORED],
  trustProxy: [WarningCodes.TRUST_PROXY_ALL, WarningCodes.TRUST_PROXY_PUBLIC],
  ip: [WarningCodes.NOT_AN_ADDRESS, WarningCodes.NO_CLIENT_ADDRESS],
  singleCount: [WarningCodes.DOUBLE_COUNT],
  creationStack: [WarningCodes.CREATED_PER_REQUEST],
};

/**
 * express-rate-limit 8's other checks: each looks at something Sluice refuses at start-up with a
 * SluiceConfigError (a bad limit or window, an unknown option, a store shared wrongly) or has no such
 * thing (hit counts from a custom store, draft-polli headers, onLimitReached), so there is nothing to
 * turn off. `default` is its switch for every check at once.
 */
const EXPRESS_RATE_LIMIT_UNNEEDED = new Set([
  'positiveHits',
  'unsharedStore',
  'limit',
  'draftPolliHeaders',
  'onLimitReached',
  'headersDraftVersion',
  'headersResetTime',
  'knownOptions',
  'validationsConfig',
  'ipv6Subnet',
  'ipv6SubnetOrKeyGenerator',
  'keyGeneratorIpFallback',
  'windowMs',
]);

/** The hint of an unknown check `key` (starting '; ', or empty), with the value given carried over. */
function foreignCheck(key: string, on: unknown): string {
  if (key === 'default') {
    return `; express-rate-limit's default switch is validate itself: write validate: ${on === false ? 'false' : 'true'}`;
  }
  if (EXPRESS_RATE_LIMIT_UNNEEDED.has(key)) {
    return `; express-rate-limit's ${key} check has nothing to turn off in Sluice (what it looks for is refused at start-up, or does not exist here): drop it`;
  }
  if (!Object.hasOwn(EXPRESS_RATE_LIMIT_CHECKS, key)) return '';
  const codes = EXPRESS_RATE_LIMIT_CHECKS[key]!;
  const value = typeof on === 'boolean' ? on : false;
  const instead = codes.map((code) => `${code}: ${value}`).join(', ');
  return `; express-rate-limit's ${key} check is Sluice's ${codes.join(' and ')}: write validate: { ${instead} } instead`;
}

/** `validate`: true (every check), false (none), or checks turned off by code. */
export function parseValidate(value: unknown): ReadonlySet<string> | false {
  if (value === undefined || value === true) return new Set();
  if (value === false) return false;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(
      ErrorCodes.INVALID_OPTION,
      'validate',
      `expected a boolean or { [code]: boolean }; got ${describeValue(value)}`,
    );
  }
  const entries = Object.entries(value);
  // Every unknown check in one error, as every unknown option (an express-rate-limit validate object
  // pasted whole took a run per key).
  const unknown = entries.filter(([code]) => !CODES.has(code));
  if (unknown.length > 0) {
    const hints = unknown.map(
      ([code, on], i) => `${i === 0 ? '' : `validate.${code}: `}unknown check${foreignCheck(code, on)}`,
    );
    fail(
      ErrorCodes.UNKNOWN_OPTION,
      `validate.${unknown[0]![0]}`,
      `${hints.join('; ')}; the checks are ${[...CODES].join(', ')}`,
    );
  }
  const off = new Set<string>();
  for (const [code, on] of entries) {
    if (typeof on !== 'boolean') {
      fail(ErrorCodes.INVALID_OPTION, `validate.${code}`, `expected a boolean; got ${describeValue(on)}`);
    }
    if (!on) off.add(code);
  }
  return off;
}

/** The warnings of one limiter: each at most once, unless turned off. */
export class Warnings {
  private readonly warned = new Set<WarningCode>();

  constructor(
    private readonly off: ReadonlySet<string> | false,
    private readonly limiter: string,
  ) {}

  /** Whether any check is on (the per-request ones are skipped when none is). */
  get on(): boolean {
    return this.off !== false;
  }

  /** Emits the warning unless turned off or emitted already; whether it is out (now or before). */
  warn(code: WarningCode, detail = ''): boolean {
    if (this.off === false || this.off.has(code)) return false;
    if (this.warned.has(code)) return true;
    this.warned.add(code);
    emitWarning(MESSAGES[code](this.limiter, detail), code);
    return true;
  }
}

/**
 * Limiters made per request (inside a handler) each start empty and never limit anything. Such a
 * limiter decides its first request in the very turn of the event loop it was made in, and the next
 * one of its name is made again for the same app. One made for a new app (tests, multi-tenant servers
 * building apps while others serve, `inject` included) serves another app; one an adapter builds once
 * and keeps (NestJS per-handler limits, built on their first request) is not counted at all. Turns are
 * told apart by a counter that a timer moves on, set only while limiters are being made.
 */
let turn = 0;
let turning = false;

/** The current turn of the event loop, as far as limiter-making needs to tell. */
export function currentTurn(): number {
  if (!turning) {
    try {
      setTimeout(() => {
        turn++;
        turning = false;
      }, 0);
      turning = true;
    } catch {
      // Workers allow no timer in a module's global scope, where a limiter is made once: no request
      // is being served there, so this turn is no request's.
    }
  }
  return turn;
}

/** By app, limiters by name that decided their first request in the turn they were made in. */
const madePerRequest = new WeakMap<object, Map<string, number>>();
/** How many of one name before the warning: a lazy one or two are no pattern. */
const MADE_PER_REQUEST = 3;
/** Names remembered per app; past that the check has seen enough. */
const NAMES_KEPT = 1000;

/**
 * A limiter decided its first request, of `app`, in the turn it was made in: counted by app and name,
 * warned of at the third.
 */
export function madeForRequest(app: object, name: string, warnings: Warnings): void {
  let byName = madePerRequest.get(app);
  if (byName === undefined) {
    byName = new Map();
    madePerRequest.set(app, byName);
  }
  if (byName.size >= NAMES_KEPT) return;
  const made = (byName.get(name) ?? 0) + 1;
  byName.set(name, made);
  if (made === MADE_PER_REQUEST) warnings.warn(WarningCodes.CREATED_PER_REQUEST);
}

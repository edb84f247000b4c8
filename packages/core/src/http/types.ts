import type { Decision } from '../decision.js';
import type { Duration } from '../duration.js';
import type { Limiter } from '../limiter.js';
import type { LimiterOptions } from '../options.js';
import type { WarningCode } from './validate.js';

/** Who is limited: a built-in source or a function of the request. */
export type SubjectSource<Req> =
  | 'ip'
  | 'api-key'
  | 'token'
  | ((req: Req) => string | undefined | Promise<string | undefined>);

/** The HTTP options, the same for Express and Fastify (`../shared/API.md`). */
export interface HttpOptions<Req = unknown, Res = unknown> extends LimiterOptions {
  /** An existing limiter instead of the core options (giving both is ERR_SLUICE_CONFLICTING_OPTIONS). */
  limiter?: Limiter;
  /**
   * Who is limited; default 'ip'. An array is tried in order, the first defined subject wins; when
   * none yields one, the client IP is the subject. Subjects carry their kind (`ip:`, `key:`,
   * `token:`, `id:`), and unverified keys and tokens are hashed.
   */
  subject?: SubjectSource<Req> | readonly SubjectSource<Req>[];
  /** Where the API key is read; default `{ header: 'x-api-key' }`. Given, it replaces the default. */
  apiKey?: { header?: string; query?: string };
  /** A key or token -> canonical subject (`id:<it>`); null counts as no credential. */
  verify?: (credential: string, kind: 'api-key' | 'token') => string | null | Promise<string | null>;
  /** IPv6 clients are grouped by this prefix (1–128); false: each address alone. Default 64. */
  ipv6Subnet?: number | false;
  /** Units a request spends: a positive integer, or a function returning one. Default 1. */
  cost?: number | ((req: Req) => number | Promise<number>);
  /** True: never limited, nothing counted, no headers. */
  skip?: (req: Req) => boolean | Promise<boolean>;
  /**
   * Never limited. An IP address or CIDR range (`10.0.0.0/8`, `2001:db8::/32`) matches the client
   * address only; any other entry matches the subject only: a verified or custom subject, or the raw
   * key or token. A malformed address or range is a configuration error.
   */
  allowList?: string[] | ((req: Req, subject: string | undefined) => boolean | Promise<boolean>);
  /** Answered 403, no Retry-After. Matched like allowList. */
  denyList?: string[] | ((req: Req, subject: string | undefined) => boolean | Promise<boolean>);
  /** Denied `after` times within `within` (default: the longest policy window) -> 403 for `for`. Kept in the store. */
  ban?: { after: number; within?: Duration; for: Duration };
  /** Default 'draft-10'. 'draft-8' writes the same fields (what express-rate-limit 8 recommends). */
  headers?: 'draft-10' | 'draft-8' | 'draft-7' | 'draft-6' | false;
  /** Also X-RateLimit-Limit, -Remaining, -Reset (epoch seconds). Default false. */
  legacyHeaders?: boolean;
  /** Status of a request a policy denied, 400–599. Default 429. */
  statusCode?: number;
  /**
   * Answers every refusal instead of the problem+json body: 429 (or `statusCode`), 403 for a ban or the
   * deny list, 503 for a failed store (`decision.reason` says which); status and headers are set first.
   */
  handler?: (req: Req, res: Res, decision: Decision) => void;
  /** Decide, set headers and report, but never block (not even denyList or ban). */
  shadow?: boolean;
  /** Every limiter and ban decision; an error thrown here goes to the framework's error handling. */
  onDecision?: (req: Req, decision: Decision) => void;
  /** Refund after a response with status >= 400, or a connection closed before the response finished. */
  skipFailedRequests?: boolean;
  /** Refund after a response with status < 400. */
  skipSuccessfulRequests?: boolean;
  /**
   * API keys and tokens nobody verified are hashed with HMAC-SHA-256 under this secret instead of
   * plain SHA-256, so the store's contents cannot be tested against guessed keys. Changing it starts
   * every credential's counts afresh.
   */
  credentialSecret?: string | Uint8Array;
  /**
   * One-time warnings for deployments that would limit the wrong thing (default true): false turns
   * them all off, `{ ERR_SLUICE_…: false }` one.
   */
  validate?: boolean | Partial<Record<WarningCode, boolean>>;
  /**
   * Limits that depend on the request (free and paid tiers): each plan its own policies (`policies`,
   * or the shorthand `limit`, `window`, `algorithm`, `burst`, `delay`, `scope`), each checked now.
   * `plan` picks one per request; a name that is no plan is an error passed to the framework
   * (ERR_SLUICE_UNKNOWN_PLAN). Not together with the policy options or `limiter`.
   */
  plans?: Record<
    string,
    Omit<LimiterOptions, 'store' | 'name' | 'prefix' | 'onStoreError' | 'storeTimeout' | 'denyCacheMs'>
  >;
  plan?: (req: Req) => string | Promise<string>;
}

/**
 * How a framework trusts proxies: `'none'`; `'count'`, by hop count or all of them (Express and Fastify
 * a number or true, Koa `app.proxy`); `'address'`, by their addresses (names, ranges, a function, or
 * an adapter's `getIp`, where the app picked its source).
 */
export type ProxyTrust = 'none' | 'count' | 'address';

/** How core reads a framework's request; an adapter passes one set of these for all requests. */
export interface RequestReader<Req> {
  /** The address the connection comes from (before any proxy header), for the validation warnings. */
  peer?(req: Req): string | undefined;
  /** The decision an earlier limiter put on this request (`req.rateLimit`), for stacked limiters' headers. */
  previous?(req: Req): Decision | undefined;
  /** Whether the framework trusts every proxy (Koa `app.proxy` with no hop count), for the validation warnings. */
  trustsAnyProxy?(req: Req): boolean;
  /**
   * How the framework trusts proxies, for the validation warnings: a public peer trusted by count is
   * a client's way in; under a trust by address, a public peer's own X-Forwarded-For is no proxy's.
   */
  trust?(req: Req): ProxyTrust | undefined;
  /**
   * The Express app or Fastify instance serving the request (`req.app`, `request.server`, under NestJS
   * too): each app is checked once (`checkApp`), and limiters made per request are told by app.
   */
  app?(req: Req): unknown;
  /**
   * Checks the settings of an app `app` returned, on its first request, warning through `http`
   * (frameworkReader: checkTrustProxy, Express's and Fastify's trust-proxy setting). The reader's, so a
   * fetch handler, which has no app, does not carry the frameworks' checks.
   */
  checkApp?(app: unknown, http: { warn(code: WarningCode, detail?: string): boolean }): void;
  /** The client IP as the framework resolved it (Express `req.ip`, Fastify `request.ip`). */
  ip(req: Req): string | undefined;
  /**
   * Whether the client has gone (its connection closed) before the decision: such a request is neither
   * charged nor passed on. Absent where nothing tells (a fetch handler off Node).
   */
  gone?(req: Req): boolean;
  /** A header's value, name in lower case; the first value when repeated. */
  header(req: Req, name: string): string | undefined;
  /** A query-string parameter's value; the first value when repeated. */
  query(req: Req, name: string): string | undefined;
}

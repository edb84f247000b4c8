import { isUpstashAlgorithm, upstashLimiterNote } from './foreign-upstash.js';
import { isPg } from './stores/postgres/clients/pg.js';
import { isPostgresJs } from './stores/postgres/clients/postgres-js.js';

/**
 * The options of express-rate-limit 8, rate-limit-redis 6, @fastify/rate-limit 11,
 * rate-limiter-flexible 11, @nestjs/throttler 6 (and express-slow-down's delays, and a few names of
 * older versions) that Sluice does not take under that name: an unknown option of these names says
 * what to write instead (`to`, when that option is valid where the mistake is), with the new shape
 * where it differs, or what to do instead (`note` alone), or that Sluice needs nothing there.
 * test/regressions/foreign-options.test.ts walks each library's full list; docs/migrating.md's tables
 * are checked against it.
 */
export interface ForeignOption {
  /** The Sluice option that takes its place. */
  readonly to?: string;
  /** The new shape, or what to do instead when nothing takes its place. */
  readonly note?: string;
  /**
   * The hint in the core limiter (createLimiter), where `to` is no option: where that option lives
   * instead. Without it, the core limiter gives no hint of an HTTP option (its list would mislead).
   */
  readonly core?: string;
  /**
   * The hint for this value, where the value tells which library it came from or carries the new
   * shape (a pg Pool as storeClient is no Redis client): replaces the entry when it returns one.
   */
  readonly byValue?: (value: unknown) => ForeignOption | undefined;
}

const NOTHING_FOR_STORE =
  "a setting of that library's own store: Sluice keeps counts in a MemoryStore (the default), Redis or Valkey (new RedisStore({ client })), PostgreSQL (new PostgresStore({ client })) or across cluster workers (ClusterStore), and needs nothing here";
const CLIENT_TOLD_APART =
  'new RedisStore({ client }) tells ioredis, node-redis, iovalkey and @upstash/redis clients apart itself: nothing to write';
const SCRIPTS =
  "Sluice's Redis scripts are its own and take no custom script: nothing to write (a store of your own implements the Store interface)";
const ON_DECISION = 'onDecision: (req, decision) => …, called for every decision';
const HANDLER =
  'handler: (req, res, decision) => res.status(429).json({ … }) answers the refusal itself (Fastify: reply.send(…); Koa: ctx.body = …; Hono: return c.json(…)); a returned body is not sent';
const HEADERS =
  "headers: 'draft-10' (the default), 'draft-8', 'draft-7', 'draft-6' or false (express-rate-limit's standardHeaders: true is 'draft-6'), and legacyHeaders: true for X-RateLimit-*; Retry-After is always sent on a refusal";
const BAN =
  "ban: { after: 3, within: '1m', for: '15m' }: a subject refused `after` times within `within` is answered 403 for `for` (durations in ms or '15m')";
const BLOCK_UNITS = "rate-limiter-flexible's blockDuration was seconds, @nestjs/throttler's milliseconds";
// rate-limiter-flexible's block is on the limiter itself; Sluice's ban is the HTTP layer's (API.md).
const BAN_IS_HTTP = `a ban is an option of the HTTP layer (rateLimiter() of @sluice/express, @sluice/koa, @sluice/hono or @sluice/fetch, @sluice/fastify's plugin, SluiceModule, createHttpHandler), not of createLimiter, a policy or a plan: ${BAN}`;
const SKIP = "skip: (req) => boolean, e.g. (req) => /bot/i.test(req.headers['user-agent'] ?? '')";
const SUBJECT =
  "subject: (req) => string, or 'ip' (the default), 'api-key', 'token', or an array tried in order";
const STORE = 'store: new RedisStore({ client }) from @sluice/core, with your Redis client';
// rate-limiter-flexible's RateLimiterPostgres takes a pg Pool or Client as storeClient: told apart by
// shape (pg is an optional peer, never imported here), as PostgresStore itself does.
const POSTGRES_STORE =
  'store: new PostgresStore({ client }) from @sluice/core, with your pg Pool or Client (or postgres.js sql): PostgreSQL 15 or later';
const postgresClient = (value: unknown): ForeignOption | undefined =>
  isPg(value) || isPostgresJs(value) ? { to: 'store', note: POSTGRES_STORE } : undefined;
/** Their table name written into the hint, when it is a plain name (never a long or odd string). */
const quoted = (value: unknown, otherwise: string) =>
  typeof value === 'string' && /^[A-Za-z_][\w.]{0,62}$/.test(value) ? `'${value}'` : otherwise;
const PG_TABLE = (value: unknown) =>
  `store: new PostgresStore({ client, table: ${quoted(value, "'rate_limits'")} }): PostgresStore's table option (default 'sluice_limits'; 'schema.table' for a schema); for another database, ${NOTHING_FOR_STORE}`;
// RLWrapperBlackAndWhite's limiter, a rate-limiter-flexible limiter: its options are Sluice's here.
const FLEXIBLE_LIMITER =
  "a limiter of rate-limiter-flexible: write its options here instead (points as limit, duration in SECONDS as window: '60s'); its black and white lists are the HTTP layer's denyList and allowList";
const isFlexibleLimiter = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  ['consume', 'penalty', 'reward'].every((m) => typeof (value as Record<string, unknown>)[m] === 'function');
// express-rate-limit's and @fastify/rate-limit's max (and limit) may be a function of the request:
// Sluice's limits that depend on the request are plans, each checked when the limiter is built.
const PLANS_SHAPE =
  "plans: { free: { limit: 10, window: '1m' }, paid: { limit: 100, window: '1m' } } with plan: (req) => (req.user?.paid ? 'paid' : 'free') picks a set of policies per request";
/** Said where createLimiter was called: plans are not its option. */
export const PLANS = `limits that depend on the request are plans, an option of the HTTP layer (rateLimiter() of an adapter, createHttpHandler), not of createLimiter: ${PLANS_SHAPE}`;
/**
 * Said where the HTTP layer was called: "not of createLimiter" puzzled users of an adapter, who never
 * called it (review 28); plans go beside the options they gave.
 */
export const PLANS_HERE = `limits that depend on the request are plans, given in these same options (of rateLimiter(), @sluice/fastify's plugin or a route's config.rateLimit, SluiceModule or @RateLimit, createHttpHandler): ${PLANS_SHAPE}`;
const limitPerRequest = (value: unknown): ForeignOption | undefined =>
  typeof value === 'function' ? { to: 'plans', note: PLANS_HERE, core: PLANS } : undefined;
// @fastify/rate-limit's addHeaders switch its fields one by one; Sluice's headers name a draft.
const FASTIFY_HEADERS =
  "@fastify/rate-limit's addHeaders and addHeadersOnExceeding turned its x-ratelimit-* and retry-after fields on and off one by one; Sluice has no switch per field: headers: 'draft-10' (the default), 'draft-8', 'draft-7', 'draft-6' or false chooses the standard RateLimit fields, legacyHeaders: true adds X-RateLimit-Limit, -Remaining and -Reset, and Retry-After is sent on every refusal";
// Only the adapters hold a request: limiter.consume() returns the wait, as execEvenly's callers never had to.
const LEAKY =
  "algorithm: 'leaky-bucket' (slots window / limit apart; with delay: true, the default, the HTTP adapters hold each accepted request until its slot, while limiter.consume() holds nothing: it returns decision.delayMs, the wait to apply yourself)";

export const FOREIGN_OPTIONS: Readonly<Record<string, ForeignOption>> = {
  // express-rate-limit 8
  windowMs: { to: 'window', note: "milliseconds as before, or a string such as '15m'" },
  max: { to: 'limit', byValue: limitPerRequest },
  message: { to: 'handler', note: HANDLER },
  standardHeaders: { to: 'headers', note: HEADERS },
  identifier: {
    note: "the policy's name: policies: [{ name: '…', limit, window }] names it in the RateLimit fields",
  },
  retryAfter: {
    note: "Sluice sends Retry-After from the decision's retryAfterMs on every refusal: nothing to write",
  },
  requestPropertyName: {
    note: "the decision is always on req.rateLimit (Fastify request.rateLimit, Koa ctx.state.rateLimit, Hono c.get('rateLimit')): nothing to write",
  },
  keyGenerator: { to: 'subject', note: SUBJECT },
  requestWasSuccessful: {
    note: 'skipFailedRequests and skipSuccessfulRequests go by the status sent (>= 400 failed): no callback to write',
  },
  passOnStoreError: {
    to: 'onStoreError',
    note: "onStoreError: 'allow' for passOnStoreError: true; the default 'local' decides in process",
  },
  logger: {
    note: 'Sluice logs nothing itself: its warnings go through process.emitWarning (type SluiceWarning), decisions through onDecision and the sluice:* diagnostics channels',
  },
  // rate-limit-redis 6 (its RedisStore's options)
  sendCommand: {
    to: 'store',
    note: 'store: new RedisStore({ client }) from @sluice/core takes the Redis client itself, not a sendCommand function',
  },
  sendCommandCluster: {
    to: 'store',
    note: 'store: new RedisStore({ client: cluster }) from @sluice/core takes the cluster client itself',
  },
  resetExpiryOnChange: {
    note: "nothing needed: Sluice's script sets each key's expiry from its policy on every change",
  },
  // @fastify/rate-limit 11
  timeWindow: { to: 'window', note: "milliseconds, or a string such as '1 minute'" },
  skipOnError: {
    to: 'onStoreError',
    note: "onStoreError: 'allow' for skipOnError: true; the default 'local' decides in process",
  },
  cache: { to: 'store', note: 'store: new MemoryStore({ maxKeys: 5000 }) bounds the keys kept in memory' },
  continueExceeding: {
    note: `nothing: a refused request consumes nothing, so refusals never extend the window; to penalise clients that keep trying, ${BAN}`,
  },
  onBanReach: { to: 'onDecision', note: `${ON_DECISION}; a ban's has decision.reason === 'ban'` },
  groupId: { to: 'name', note: 'limiters (and routes) with one name on one store share counters' },
  errorResponseBuilder: { to: 'handler', note: HANDLER },
  enableDraftSpec: {
    to: 'headers',
    note: "the RateLimit fields are on by default (headers: 'draft-10'); headers: 'draft-6' for the RateLimit-Limit, -Remaining and -Reset that enableDraftSpec sent",
  },
  onExceeding: { to: 'onDecision', note: `${ON_DECISION} (decision.allowed, decision.remaining)` },
  onExceeded: { to: 'onDecision', note: `${ON_DECISION}; a refusal has decision.allowed === false` },
  exponentialBackoff: { note: `no backoff: ${BAN}` },
  redis: {
    to: 'store',
    note: 'store: new RedisStore({ client: redis }) from @sluice/core (an ioredis, node-redis or @upstash/redis client)',
  },
  nameSpace: { to: 'prefix' },
  addHeaders: { to: 'headers', note: FASTIFY_HEADERS },
  addHeadersOnExceeding: { to: 'headers', note: FASTIFY_HEADERS },
  hook: { note: "an option of the Fastify plugin and its route config: hook: 'onRequest' | 'preHandler'" },
  global: { note: 'an option of the Fastify plugin: global: false limits only routes with config.rateLimit' },
  // rate-limiter-flexible 11
  keyPrefix: { to: 'prefix', note: 'prefix (the key namespace) and name (the resource the limiter guards)' },
  points: { to: 'limit' },
  duration: {
    to: 'window',
    note: "rate-limiter-flexible's duration is in SECONDS and window in milliseconds: duration: 60 is window: '60s' (or 60_000); window: 60 would be 60 ms",
  },
  execEvenly: { to: 'algorithm', note: LEAKY },
  execEvenlyMinDelayMs: { to: 'algorithm', note: `${LEAKY}; there is no minimum delay to set` },
  blockDuration: {
    to: 'ban',
    note: `${BAN}; ${BLOCK_UNITS}`,
    core: `${BAN_IS_HTTP}; ${BLOCK_UNITS}`,
  },
  insuranceLimiter: {
    to: 'onStoreError',
    note: "the default onStoreError: 'local' decides in process while the store is down: nothing to write",
  },
  timeoutMs: {
    to: 'storeTimeout',
    note: "storeTimeout: '250ms' (the default): a slower store counts as failed",
  },
  storeClient: { to: 'store', note: STORE, byValue: postgresClient },
  storeType: {
    note: 'nothing: the store you pass says which: store: new RedisStore({ client }) for any Redis client (told apart itself), store: new PostgresStore({ client }) for a pg Pool or Client or postgres.js (for knex, sequelize or typeorm, the pg Pool beneath them)',
  },
  inMemoryBlockOnConsumed: {
    note: 'the deny cache does this for remote stores, on by default (denyCacheMs bounds how long): nothing to write',
  },
  inMemoryBlockDuration: { to: 'denyCacheMs', note: 'denyCacheMs: 1000 (the default), 0 for none' },
  blockOnConsumed: { to: 'ban', note: BAN, core: BAN_IS_HTTP },
  dbName: { note: NOTHING_FOR_STORE },
  tableName: {
    to: 'store',
    note: PG_TABLE(undefined),
    byValue: (value) => ({ to: 'store', note: PG_TABLE(value) }),
  },
  tableCreated: {
    to: 'store',
    note: 'store: new PostgresStore({ client, createTable: false }) for a table your migrations create (PostgresStore.schema() returns its SQL); by default the store creates it on first use',
  },
  clearExpiredByTimeout: {
    note: 'nothing needed: PostgresStore deletes expired rows itself, a bounded batch at a time as it works (Redis keys carry a TTL)',
  },
  schema: { note: NOTHING_FOR_STORE },
  schemaName: {
    to: 'store',
    note: "store: new PostgresStore({ client, table: 'your_schema.sluice_limits' }): the schema is part of PostgresStore's table option",
  },
  indexKeyPrefix: { note: NOTHING_FOR_STORE },
  disableIndexesCreation: { note: NOTHING_FOR_STORE },
  dynamoTableOpts: { note: NOTHING_FOR_STORE },
  ttlSet: { note: NOTHING_FOR_STORE },
  rejectIfRedisNotReady: {
    to: 'onStoreError',
    note: "onStoreError: 'deny' refuses while the store is down; the default 'local' decides in process",
  },
  rejectIfValkeyNotReady: {
    to: 'onStoreError',
    note: "onStoreError: 'deny' refuses while the store is down; the default 'local' decides in process",
  },
  useRedisPackage: { note: CLIENT_TOLD_APART },
  useRedis3AndLowerPackage: { note: CLIENT_TOLD_APART },
  customIncrTtlLuaScript: { note: SCRIPTS },
  customFunction: { note: SCRIPTS },
  customFunctionLibName: { note: SCRIPTS },
  blackList: { to: 'denyList' },
  whiteList: { to: 'allowList' },
  isBlackListed: { to: 'denyList', note: 'denyList: (req, subject) => boolean' },
  isWhiteListed: { to: 'allowList', note: 'allowList: (req, subject) => boolean' },
  runActionAnyway: {
    to: 'shadow',
    note: 'allow-listed requests are never counted; shadow: true decides, counts and reports without refusing',
  },
  maxQueueSize: { to: 'algorithm', note: `${LEAKY}; its burst bounds how many wait` },
  // @nestjs/throttler 6
  ttl: { to: 'window', note: "milliseconds, as in @nestjs/throttler 6, or '1m'" },
  ignoreUserAgents: { to: 'skip', note: SKIP },
  skipIf: { to: 'skip', note: SKIP },
  getTracker: { to: 'subject', note: SUBJECT },
  generateKey: { to: 'subject', note: `${SUBJECT}: requests with one subject count together` },
  setHeaders: { to: 'headers', note: 'headers: false sends no RateLimit fields; they are on by default' },
  errorMessage: { to: 'handler', note: HANDLER },
  storage: { to: 'store', note: STORE },
  ipv6SubnetPrefix: { to: 'ipv6Subnet' },
  throttlers: {
    to: 'policies',
    note: "policies: [{ name: 'short', limit: 3, window: '1s' }, { name: 'long', limit: 100, window: '1m' }], decided together",
  },
  // @upstash/ratelimit 2 (its redis and prefix are above and Sluice's own)
  limiter: {
    note: upstashLimiterNote(),
    byValue: (value) =>
      isUpstashAlgorithm(value)
        ? { note: upstashLimiterNote(value) }
        : isFlexibleLimiter(value)
          ? { note: FLEXIBLE_LIMITER }
          : undefined,
  },
  timeout: {
    to: 'storeTimeout',
    note: "storeTimeout: 1000 (ms, or '1s'; default 250 ms). @upstash/ratelimit let the request through after its timeout; Sluice follows onStoreError: the default 'local' decides in process, 'allow' lets it through as before",
  },
  ephemeralCache: {
    to: 'denyCacheMs',
    note: 'the deny cache, on by default for RedisStore, answers a cached denial in process: denyCacheMs: 1000 (the default) bounds how long, 0 turns it off (for ephemeralCache: false); no Map to pass',
  },
  analytics: {
    to: 'onDecision',
    note: `${ON_DECISION}, or instrument() from @sluice/core/otel for OpenTelemetry metrics (decisions, store latency and errors)`,
    core: "createLimiter has no onDecision: instrument() from @sluice/core/otel gives OpenTelemetry metrics, the sluice:decision diagnostics channel every decision; the HTTP adapters' rateLimiter() takes onDecision: (req, decision) => …",
  },
  enableProtection: {
    to: 'denyList',
    note: "denyList: ['203.0.113.0/24', …] or (req, subject) => boolean, answered 403: Sluice fetches no shared list of bad addresses",
    core: 'denyList is an option of the HTTP layer (rateLimiter() of an adapter, createHttpHandler), not of createLimiter; Sluice fetches no shared list of bad addresses',
  },
  denyListThreshold: {
    note: 'nothing: Sluice fetches no shared deny list to take a threshold of; denyList holds your own entries',
  },
  dynamicLimits: {
    note: "no limit kept in Redis to change at run time: plans: { free: { limit: 10, window: '1m' }, paid: { limit: 100, window: '1m' } } with plan: (req) => 'free' | 'paid' picks limits per request (HTTP adapters); for a new limit everywhere, a new limiter",
  },
  // express-slow-down
  delayMs: {
    note: "express-slow-down's delayMs has no counterpart: Sluice's delay is a boolean of leaky-bucket; algorithm: 'leaky-bucket' holds each request until its slot, window / limit apart",
  },
  delayAfter: {
    note: "algorithm: 'leaky-bucket' with burst: N lets N through at once, then spaces the rest",
  },
  // Other names of other versions, and names too far from Sluice's for the edit distance to find.
  allowlist: { to: 'allowList' },
  whitelist: { to: 'allowList' },
  blacklist: { to: 'denyList' },
  status: { to: 'statusCode' },
  banDuration: { to: 'ban', note: BAN, core: BAN_IS_HTTP },
  // Sluice's own HTTP option, given to createLimiter (or a policy, or a plan).
  ban: { to: 'ban', core: BAN_IS_HTTP },
  trustProxy: {
    note: "Sluice limits the address the framework gives (req.ip, request.ip, ctx.ip) and reads no proxy header itself: trust your proxies, and only them, where the framework does by address, never a hop count (Express: app.set('trust proxy', 'loopback, linklocal, uniquelocal'); Fastify: Fastify({ trustProxy: … }); Koa and Hono: getIp: privateProxyIp; NestJS: on its platform, app.set('trust proxy', …) or new FastifyAdapter({ trustProxy: … }))",
  },
};

/**
 * The catalogue's entry for `key` given `value`, own keys only: `constructor` or `toString` are no
 * option of another library.
 */
export function foreignOption(key: string, value?: unknown): ForeignOption | undefined {
  const entry = Object.hasOwn(FOREIGN_OPTIONS, key) ? FOREIGN_OPTIONS[key] : undefined;
  return entry?.byValue?.(value) ?? entry;
}

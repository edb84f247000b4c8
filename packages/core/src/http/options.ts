import type { Decision } from '../decision.js';
import { parseDuration } from '../duration.js';
import { describeValue, ErrorCodes, SluiceConfigError } from '../errors.js';
import { foreignStore } from '../foreign-stores.js';
import { isUpstashAlgorithm, upstashLimiterNote } from '../foreign-upstash.js';
import { credentialDigest } from '../keys.js';
import { createLimiter, type Limiter } from '../limiter.js';
import {
  expectObject,
  fail,
  LIMITER_KEYS,
  nonEmptyString,
  oneOf,
  PLAN_KEYS,
  positiveInteger,
  rejectUnknown,
} from '../options.js';
import { MemoryStore } from '../stores/memory-store.js';
import type { Store } from '../stores/store.js';
import type { HeaderMode } from './headers.js';
import { rejectLimitPerRequest } from './limit-per-request.js';
import { type ListConfig, parseList } from './lists.js';
import type { SubjectConfig } from './subject.js';
import type { HttpOptions, SubjectSource } from './types.js';
import { parseValidate } from './validate.js';

export interface BanConfig {
  readonly after: number;
  readonly withinMs: number;
  readonly forMs: number;
}

/** The HTTP options, parsed once and frozen. */
export interface HttpConfig<Req, Res> {
  readonly limiter: Limiter;
  /** The store behind the limiter, for the ban's own limiters (a MemoryStore of their own when unknown). */
  readonly store: Store;
  readonly subject: SubjectConfig<Req>;
  readonly cost: number | ((req: Req) => unknown);
  readonly skip: ((req: Req) => unknown) | undefined;
  readonly allowList: ListConfig<Req> | undefined;
  readonly denyList: ListConfig<Req> | undefined;
  readonly ban: BanConfig | undefined;
  readonly headers: HeaderMode;
  readonly legacyHeaders: boolean;
  readonly statusCode: number;
  readonly handler: ((req: Req, res: Res, decision: Decision) => void) | undefined;
  readonly shadow: boolean;
  readonly onDecision: ((req: Req, decision: Decision) => unknown) | undefined;
  readonly skipFailedRequests: boolean;
  readonly skipSuccessfulRequests: boolean;
  /** Checks turned off by code, or false for none at all. */
  readonly validate: ReadonlySet<string> | false;
  /** `plans`: a limiter per plan name, and `plan`, which picks one per request. */
  readonly plans:
    | { readonly limiters: ReadonlyMap<string, Limiter>; readonly pick: (req: Req) => unknown }
    | undefined;
}

/** The options of the HTTP layer itself; every other key must be a limiter option. */
const HTTP_KEYS: ReadonlySet<string> = new Set([
  'limiter',
  'subject',
  'apiKey',
  'verify',
  'ipv6Subnet',
  'cost',
  'skip',
  'allowList',
  'denyList',
  'ban',
  'headers',
  'legacyHeaders',
  'statusCode',
  'handler',
  'shadow',
  'onDecision',
  'skipFailedRequests',
  'skipSuccessfulRequests',
  'credentialSecret',
  'validate',
  'plans',
  'plan',
]);
const ALL_KEYS: ReadonlySet<string> = new Set([...LIMITER_KEYS, ...HTTP_KEYS]);
const SOURCES = ['ip', 'api-key', 'token'] as const;

function optionalFunction<F>(value: unknown, option: string): F | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') {
    fail(ErrorCodes.INVALID_OPTION, option, `expected a function; got ${describeValue(value)}`);
  }
  return value as F;
}

/**
 * express-rate-limit's handler is `(req, res, next, options)`: pasted unchanged it passed the function
 * check, and every refusal then threw (its `options.statusCode` read off Sluice's decision, `next` was
 * the decision). No Sluice handler takes four parameters, so `length === 4` tells it apart at start.
 */
function parseHandler<F>(value: unknown): F | undefined {
  const handler = optionalFunction<F>(value, 'handler');
  if (typeof handler === 'function' && handler.length === 4) {
    fail(
      ErrorCodes.INVALID_OPTION,
      'handler',
      `takes 4 parameters, as express-rate-limit's (req, res, next, options) does; Sluice calls handler: (req, res, decision) => res.status(429).json({ … }) (Fastify: reply.send(…); Koa: (ctx, _, decision) => { ctx.body = … }; Hono: return c.json(…)): answer the refusal there, with decision.retryAfterMs and decision.reason in place of options`,
    );
  }
  return handler;
}

function flag(value: unknown, option: string): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean') {
    fail(ErrorCodes.INVALID_OPTION, option, `expected a boolean; got ${describeValue(value)}`);
  }
  return value;
}

function isLimiter(value: unknown): value is Limiter {
  const limiter = value as Limiter;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof limiter.decide === 'function' &&
    typeof limiter.consume === 'function' &&
    typeof limiter.config === 'object'
  );
}

function parseSources<Req>(value: unknown): SubjectConfig<Req>['sources'] {
  if (value === undefined) return Object.freeze(['ip' as const]);
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0) fail(ErrorCodes.INVALID_OPTION, 'subject', 'expected at least one subject source');
  // Array.from visits holes too: a sparse array's hole is an invalid source, not a skipped one.
  return Object.freeze(
    Array.from(list, (source: unknown, i): SubjectSource<Req> => {
      const option = Array.isArray(value) ? `subject[${i}]` : 'subject';
      if (typeof source === 'function') return source as SubjectSource<Req>;
      return oneOf(source, SOURCES, option);
    }),
  );
}

function parseApiKey(value: unknown): { header: string | undefined; query: string | undefined } {
  if (value === undefined) return { header: 'x-api-key', query: undefined };
  expectObject(value, 'apiKey');
  rejectUnknown(value, new Set(['header', 'query']), 'apiKey');
  const header = value.header === undefined ? undefined : nonEmptyString(value.header, 'apiKey.header');
  const query = value.query === undefined ? undefined : nonEmptyString(value.query, 'apiKey.query');
  if (header === undefined && query === undefined) {
    fail(ErrorCodes.INVALID_OPTION, 'apiKey', 'give `header`, `query` or both');
  }
  return { header: header?.toLowerCase(), query };
}

function parseSubnet(value: unknown): number | false {
  if (value === undefined) return 64;
  if (value === false) return false;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 128) {
    fail(
      ErrorCodes.INVALID_OPTION,
      'ipv6Subnet',
      `expected a prefix length from 1 to 128, or false; got ${describeValue(value)}`,
    );
  }
  return value;
}

/** The ban; `withinMs` undefined means the longest policy window, known once the limiter is. */
function parseBan(value: unknown): (Omit<BanConfig, 'withinMs'> & { withinMs?: number }) | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(
      ErrorCodes.INVALID_OPTION,
      'ban',
      `expected { after, within?, for }, e.g. { after: 3, within: '1m', for: '15m' }: a subject refused \`after\` times within \`within\` is answered 403 for \`for\`; got ${describeValue(value)}${typeof value === 'number' ? ` (a count, as @fastify/rate-limit's ban, is \`after\`; its ban lasted until the window ended, so \`for\` is that window: ban: { after: ${value}, for: <the window> })` : ''}`,
    );
  }
  expectObject(value, 'ban');
  rejectUnknown(value, new Set(['after', 'within', 'for']), 'ban');
  const after = positiveInteger(value.after, 'ban.after');
  if (value.for === undefined) fail(ErrorCodes.INVALID_DURATION, 'ban.for', 'is required');
  const forMs = parseDuration(value.for, 'ban.for');
  if (value.within === undefined) return { after, forMs };
  return { after, forMs, withinMs: parseDuration(value.within, 'ban.within') };
}

function parseHeaders(value: unknown): HeaderMode {
  if (value === undefined) return 'draft-10';
  if (value === false) return false;
  if (value === true) {
    // express-rate-limit's `headers: true` (and `standardHeaders: true`): the fields are on by default.
    fail(
      ErrorCodes.INVALID_OPTION,
      'headers',
      "expected a draft name or false; got true: leave it out for the default 'draft-10' (or write headers: 'draft-10', or 'draft-8' as express-rate-limit recommends); legacyHeaders: true adds X-RateLimit-*",
    );
  }
  return oneOf(value, ['draft-10', 'draft-8', 'draft-7', 'draft-6'] as const, 'headers');
}

function parseStatus(value: unknown): number {
  if (value === undefined) return 429;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 400 || value > 599) {
    fail(
      ErrorCodes.INVALID_OPTION,
      'statusCode',
      `expected an HTTP error status from 400 to 599; got ${describeValue(value)}`,
    );
  }
  return value;
}

function parseCost<Req>(value: unknown): HttpConfig<Req, unknown>['cost'] {
  if (value === undefined) return 1;
  if (typeof value === 'function') return value as (req: Req) => unknown;
  return positiveInteger(value, 'cost');
}

/** A constant cost above every policy's capacity would refuse every request, with no Retry-After. */
function checkCostFits(cost: number | ((req: never) => unknown), limiter: Limiter): void {
  if (typeof cost !== 'number') return;
  const capacities = limiter.config.policies.map((p) => p.params.burst);
  if (capacities.every((capacity) => cost > capacity)) {
    fail(
      ErrorCodes.COST_EXCEEDS_CAPACITY,
      'cost',
      `${cost} is more than any policy holds (capacity ${Math.max(...capacities)}), so every request would be refused; lower the cost or raise limit/burst`,
    );
  }
}

/** The options that would make a limiter's policies, which `plans` replaces. */
const POLICY_OPTIONS = ['policies', 'limit', 'window', 'algorithm', 'burst', 'delay', 'scope', 'limiter'];

/**
 * `plans` + `plan`: a limiter per plan, each checked now, on one store, named `<name>/<plan>`. The
 * other limiter options (store, prefix, onStoreError, …) apply to every plan.
 */
function parsePlans<Req>(
  options: Record<string, unknown>,
): { limiters: Map<string, Limiter>; pick: (req: Req) => unknown; store: Store } | undefined {
  const { plans, plan } = options;
  if (plans === undefined && plan === undefined) return undefined;
  expectObject(plans, 'plans');
  if (typeof plan !== 'function') {
    fail(
      ErrorCodes.INVALID_OPTION,
      'plan',
      `expected a function of the request returning a plan name; got ${describeValue(plan)}`,
    );
  }
  const given = POLICY_OPTIONS.find((key) => options[key] !== undefined);
  if (given !== undefined) {
    fail(
      ErrorCodes.CONFLICTING_OPTIONS,
      given,
      'cannot be given together with `plans`: each plan sets its own policies',
    );
  }
  const shared: Record<string, unknown> = {};
  for (const key of LIMITER_KEYS)
    if (options[key] !== undefined && key !== 'name') shared[key] = options[key];
  const store = (shared.store as Store | undefined) ?? new MemoryStore();
  const name = options.name === undefined ? 'default' : nonEmptyString(options.name, 'name');
  const limiters = new Map<string, Limiter>();
  for (const [planName, planOptions] of Object.entries(plans)) {
    const option = `plans.${planName}`;
    expectObject(planOptions, option);
    rejectUnknown(planOptions, PLAN_KEYS, option);
    try {
      limiters.set(
        planName,
        createLimiter({ ...shared, ...planOptions, store, name: `${name}/${planName}` }),
      );
    } catch (error) {
      if (!(error instanceof SluiceConfigError)) throw error;
      const detail = error.message.slice(error.option.length + 2);
      throw new SluiceConfigError(error.code, `${option}.${error.option.replace(/^options\.?/, '')}`, detail);
    }
  }
  if (limiters.size === 0) fail(ErrorCodes.NO_POLICY, 'plans', 'expected at least one plan');
  return { limiters, pick: plan as (req: Req) => unknown, store };
}

/**
 * A non-empty string or Buffer (any Uint8Array, as a Buffer is one: not every runtime has Buffer); its value is never
 * shown in an error.
 */
function parseSecret(value: unknown): string | Uint8Array | undefined {
  if (value === undefined) return undefined;
  if ((typeof value === 'string' || value instanceof Uint8Array) && value.length > 0) return value;
  return fail(
    ErrorCodes.INVALID_OPTION,
    'credentialSecret',
    `expected a non-empty string or Buffer; got ${typeof value === 'string' ? 'an empty string' : describeValue(value)}`,
  );
}

/** The limiter: the `limiter` option as given, or one built from the core options. */
function buildLimiter(options: Record<string, unknown>): { limiter: Limiter; store: Store } {
  const core: Record<string, unknown> = {};
  const given: string[] = [];
  for (const key of Object.keys(options)) {
    if (options[key] !== undefined && LIMITER_KEYS.has(key)) {
      core[key] = options[key];
      given.push(key);
    }
  }
  if (options.limiter === undefined) {
    rejectLimitPerRequest(core);
    // The store is made here when not given, so the ban's limiters can count in it too.
    const store = (core.store as Store | undefined) ?? new MemoryStore();
    return { limiter: createLimiter({ ...core, store }), store };
  }
  // A limiter of another library first: its prefix or store beside it are no conflict, only pasted.
  if (!isLimiter(options.limiter)) {
    const foreign =
      foreignStore(options.limiter) ??
      (isUpstashAlgorithm(options.limiter)
        ? `a function: ${upstashLimiterNote(options.limiter)}`
        : undefined);
    fail(
      ErrorCodes.INVALID_OPTION,
      'limiter',
      `expected a limiter from createLimiter(); got ${foreign ?? describeValue(options.limiter)}`,
    );
  }
  if (given.length > 0) {
    fail(
      ErrorCodes.CONFLICTING_OPTIONS,
      given[0]!,
      `cannot be given together with \`limiter\`: the limiter already has its ${given.join(', ')}`,
    );
  }
  return { limiter: options.limiter, store: options.limiter.config.store ?? new MemoryStore() };
}

/**
 * Whether `options` is a request or a framework context: `app.use(rateLimiter)`, the middleware
 * factory mounted uncalled, makes every request call it with one (Express's req, Koa's ctx, Hono's c),
 * which would otherwise be refused for its first property (`_events: unknown option`).
 */
function isRequest(options: object): boolean {
  return (
    '_events' in options ||
    'socket' in options ||
    ('method' in options && 'headers' in options) ||
    ('req' in options && 'res' in options) ||
    ('env' in options && 'finalized' in options)
  );
}

/** Options -> frozen config. Every SluiceConfigError of the HTTP options is thrown here. */
export function parseHttpOptions<Req, Res>(
  options: HttpOptions<Req, Res>,
  adapterKeys: readonly string[] = [],
): HttpConfig<Req, Res> {
  expectObject(options, 'options');
  if (isRequest(options)) {
    fail(
      ErrorCodes.INVALID_OPTION,
      'options',
      "got a request: the middleware factory was mounted uncalled, as app.use(rateLimiter); call it: app.use(rateLimiter({ limit: 100, window: '15m' }))",
    );
  }
  rejectUnknown(options, ALL_KEYS, '', adapterKeys);
  const apiKey = parseApiKey(options.apiKey);
  const subject: SubjectConfig<Req> = Object.freeze({
    sources: parseSources<Req>(options.subject),
    apiKeyHeader: apiKey.header,
    apiKeyQuery: apiKey.query,
    verify: optionalFunction<SubjectConfig<Req>['verify']>(options.verify, 'verify'),
    ipv6Subnet: parseSubnet(options.ipv6Subnet),
    hash: credentialDigest(parseSecret(options.credentialSecret)),
  });
  const http = {
    subject,
    cost: parseCost<Req>(options.cost),
    skip: optionalFunction<(req: Req) => unknown>(options.skip, 'skip'),
    allowList: parseList<Req>(options.allowList, 'allowList'),
    denyList: parseList<Req>(options.denyList, 'denyList'),
    headers: parseHeaders(options.headers),
    legacyHeaders: flag(options.legacyHeaders, 'legacyHeaders'),
    statusCode: parseStatus(options.statusCode),
    handler: parseHandler<HttpConfig<Req, Res>['handler']>(options.handler),
    shadow: flag(options.shadow, 'shadow'),
    onDecision: optionalFunction<HttpConfig<Req, Res>['onDecision']>(options.onDecision, 'onDecision'),
    skipFailedRequests: flag(options.skipFailedRequests, 'skipFailedRequests'),
    skipSuccessfulRequests: flag(options.skipSuccessfulRequests, 'skipSuccessfulRequests'),
    validate: parseValidate(options.validate),
  };
  const ban = parseBan(options.ban);
  // The limiter last: nothing is registered on a store for options that fail.
  const plans = parsePlans<Req>(options as Record<string, unknown>);
  const { limiter, store } =
    plans === undefined
      ? buildLimiter(options as Record<string, unknown>)
      : { limiter: plans.limiters.values().next().value!, store: plans.store };
  for (const each of plans?.limiters.values() ?? [limiter]) checkCostFits(http.cost, each);
  const withinMs = ban?.withinMs ?? Math.max(...limiter.policies.map((p) => p.windowMs));
  return Object.freeze({
    ...http,
    limiter,
    store,
    ban: ban && Object.freeze({ ...ban, withinMs }),
    plans: plans && Object.freeze({ limiters: plans.limiters, pick: plans.pick }),
  });
}

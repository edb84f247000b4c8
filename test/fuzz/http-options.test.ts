import { createLimiter, ErrorCodes, SluiceConfigError } from '@sluice/core';
import { sluice } from '@sluice/fastify';
import { frameworks } from '../../packages/fastify/test/frameworks.js';
import { eachFramework } from '../adapters/frameworks.js';
import { get } from '../adapters/support.js';
import fc from '../support/fast-check.js';
import { recordWarnings } from '../support/warnings.js';
import { anyLimiterOptions, junk, validLimiterOptions } from './arbitraries.js';

/**
 * Random HTTP option objects on every framework of the shared adapter suite, and through the Fastify
 * plugin's own options (`global`, `hook`, a route's config): each either is accepted and then answers
 * a request with a status the contract allows, or is refused with a SluiceConfigError at once. Never
 * another error, never a hung request.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 250);
const CODES = new Set<string>(Object.values(ErrorCodes));
const REQUEST_TIMEOUT_MS = 3000;

function expectConfigError(error: unknown): void {
  if (!(error instanceof SluiceConfigError)) throw error;
  expect(CODES.has(error.code)).toBe(true);
}

/**
 * A callback answering from a drawn sequence, whatever it is called with: fc.func would stringify
 * its arguments (a whole request, server included) on every call.
 */
const fn = <T>(result: fc.Arbitrary<T>) =>
  fc.array(result, { minLength: 1, maxLength: 4 }).map((answers) => {
    let call = 0;
    return () => answers[call++ % answers.length];
  });
const source = fc.oneof(
  fc.constantFrom('ip' as const, 'api-key' as const, 'token' as const),
  fn(fc.oneof(fc.string({ minLength: 1 }), fc.constant(undefined), fc.constant(null))),
);

/**
 * The drawn `handler`, a marker: `answering` puts a handler that answers the framework's way in its
 * place (one for Node's response would fail on Fastify's reply, and Fastify keeps the status set).
 */
const ANSWERING = (_req: unknown, res: { end(): void }) => res.end();

/** The drawn options with `handler` in place of ANSWERING. */
function answering(drawn: unknown, handler: unknown): unknown {
  if (typeof drawn !== 'object' || drawn === null) return drawn;
  return (drawn as { handler?: unknown }).handler === ANSWERING ? { ...drawn, handler } : drawn;
}

/** HTTP options the contract accepts, each key present or not. */
const validHttp = fc.record(
  {
    subject: fc.oneof(source, fc.array(source, { minLength: 1, maxLength: 3 })),
    apiKey: fc.constantFrom({ header: 'x-api-key' }, { query: 'key' }, { header: 'X-Key', query: 'api_key' }),
    verify: fn(fc.oneof(fc.string({ minLength: 1 }), fc.constant(null))),
    ipv6Subnet: fc.oneof(fc.integer({ min: 1, max: 128 }), fc.constant(false)),
    cost: fc.oneof(fc.integer({ min: 1, max: 5 }), fn(fc.integer({ min: 1, max: 3 }))),
    skip: fn(fc.boolean()),
    allowList: fc.oneof(
      fc.array(fc.string({ minLength: 1, maxLength: 16 }), { maxLength: 3 }),
      fn(fc.boolean()),
    ),
    denyList: fc.oneof(
      fc.array(fc.oneof(fc.ipV4(), fc.string({ minLength: 1 })), { maxLength: 3 }),
      fn(fc.boolean()),
    ),
    ban: fc.record(
      {
        after: fc.integer({ min: 1, max: 5 }),
        within: fc.constantFrom('1m', 5000),
        for: fc.constantFrom('1m', 5000),
      },
      { requiredKeys: ['after', 'for'] },
    ),
    headers: fc.constantFrom('draft-10' as const, 'draft-7' as const, 'draft-6' as const, false as const),
    legacyHeaders: fc.boolean(),
    statusCode: fc.integer({ min: 400, max: 599 }),
    // A handler must answer; one that does is all a fuzz can fairly give.
    handler: fc.constant(ANSWERING),
    shadow: fc.boolean(),
    onDecision: fn(fc.constant(undefined)),
    skipFailedRequests: fc.boolean(),
    skipSuccessfulRequests: fc.boolean(),
  },
  { requiredKeys: [] },
);

const HTTP_KEYS = [
  'subject',
  'apiKey',
  'verify',
  'ipv6Subnet',
  'cost',
  'skip',
  'allowList',
  'denyList',
  'ban',
];
const MORE_KEYS = ['headers', 'legacyHeaders', 'statusCode', 'handler', 'shadow', 'onDecision', 'limiter'];

/** What a mutation puts in place of a valid value: near misses and anything at all. */
const anyValue = fc.oneof(
  fc.constantFrom('cookie', 'IP', '', 'draft-8', 0, -1, 129, 1.5, 99, 600, true, [], [undefined], {}),
  fc.constant({ header: 'x-api-key', extra: 1 }),
  fc.constant({ after: 0, for: '1m' }),
  fc.sparseArray(fc.constantFrom('ip', 'token'), { minNumElements: 1, maxLength: 3 }),
  fc.string({ maxLength: 8 }),
  junk,
);

/** Valid HTTP options with one value replaced, or with a `limiter` (then no core options may be given). */
const httpOptions = fc.oneof(
  { weight: 3, arbitrary: validHttp },
  {
    weight: 4,
    arbitrary: fc
      .tuple(validHttp, fc.constantFrom(...HTTP_KEYS, ...MORE_KEYS), anyValue)
      .map(([valid, key, value]) => ({ ...valid, [key]: value })),
  },
);

/** Core options (valid, mutated or junk, or an existing limiter) beside the HTTP options. */
const anyOptions = fc
  .tuple(
    fc.oneof(
      { weight: 6, arbitrary: validLimiterOptions },
      {
        weight: 1,
        arbitrary: fc.constant(null).map(() => ({ limiter: createLimiter({ limit: 3, window: '1m' }) })),
      },
      { weight: 2, arbitrary: anyLimiterOptions },
    ),
    httpOptions,
  )
  .map(([core, http]) => (typeof core === 'object' && core !== null ? { ...core, ...http } : http));

const headersOf = fc.dictionary(
  fc.constantFrom('x-api-key', 'authorization', 'x-forwarded-for'),
  fc.oneof(fc.string({ maxLength: 30 }), fc.constant('Bearer abcdefghijklmnop')),
  { maxKeys: 3 },
);

/**
 * The statuses an accepted option set may answer with. Every generated callback behaves (returns what
 * its option allows), so a 500 here is an option that was accepted but breaks at request time.
 */
function expectContractStatus(options: unknown, status: number, body: string): void {
  const given = (options as { statusCode?: unknown }).statusCode;
  const allowed = new Set([200, 403, typeof given === 'number' ? given : 429]);
  if (!allowed.has(status)) throw new Error(`status ${status} (${body.slice(0, 200)}) for accepted options`);
}

/** Both outcomes must be common, or the generators are not doing their job. */
function tally() {
  const seen = { accepted: 0, refused: 0 };
  return {
    seen,
    check: () => {
      expect(seen.accepted).toBeGreaterThan(RUNS / 8);
      expect(seen.refused).toBeGreaterThan(RUNS / 10);
    },
  };
}

/**
 * Every setup of the shared adapter suite (Express 5 and 4, Fastify 5 and 4, Hono 4 on node-server 2
 * and 1, Koa 3 and 2, Nest 11 on Express and on Fastify), through its driver: one options object, one
 * contract. A real server per accepted option set; each setup takes the full RUNS all the same.
 */
// Fuzzed options make every validation warning there is: captured, each a warning with a code.
describe.each(eachFramework)('fuzzed options on %s', (_label, framework) => {
  recordWarnings();
  it('either answer requests or throw SluiceConfigError at once', async () => {
    const { seen, check } = tally();
    await fc.assert(
      fc.asyncProperty(anyOptions, headersOf, async (drawn, headers) => {
        const options = answering(
          drawn,
          framework.answer(() => ({})),
        );
        let app: Awaited<ReturnType<typeof framework.start>>;
        try {
          app = await framework.start(options as never);
        } catch (error) {
          expectConfigError(error);
          seen.refused++;
          return;
        }
        seen.accepted++;
        try {
          const res = await get(app, '/ok', headers).timeout(REQUEST_TIMEOUT_MS);
          expectContractStatus(options, res.status, res.text);
        } finally {
          await app.close();
        }
      }),
      { numRuns: RUNS },
    );
    check();
  }, 120_000);
});

/** Fastify's own options besides the contract's: the plugin's `global` and `hook`, a route's config.rateLimit. */
describe.each(frameworks)('fuzzed plugin options on %s', (_label, makeApp) => {
  recordWarnings();
  const hook = fc.constantFrom('onRequest', 'preHandler', 'preHandler', 'onSend');
  const reply = (_request: unknown, r: { send(): void }) => r.send();
  const withOwn = (own: fc.Arbitrary<object>) =>
    fc
      .tuple(anyOptions, own)
      .map(([options, extra]) =>
        answering(
          typeof options === 'object' && options !== null ? { ...options, ...extra } : options,
          reply,
        ),
      );
  const pluginOptions = withOwn(
    fc.record({ global: fc.oneof(fc.boolean(), fc.boolean(), junk), hook }, { requiredKeys: [] }),
  );
  /** A route's config.rateLimit: the HTTP options and `hook` (`global` belongs to the plugin alone). */
  const routeOptions = withOwn(fc.record({ hook }, { requiredKeys: [] }));

  type App = ReturnType<typeof makeApp>;
  /**
   * Builds an app with `setup` (after `before`, whose errors are not the options' fault): either the
   * options are refused with SluiceConfigError, or the app answers a request as the contract says.
   */
  async function answerOrRefuse(
    seen: { accepted: number; refused: number },
    options: unknown,
    headers: Record<string, string>,
    setup: (app: App) => Promise<void>,
    before?: (app: App) => unknown,
  ): Promise<void> {
    const app = makeApp();
    await before?.(app);
    try {
      await setup(app);
      await app.ready();
    } catch (error) {
      expectConfigError(error);
      seen.refused++;
      await app.close();
      return;
    }
    seen.accepted++;
    const res = await app.inject({ method: 'GET', url: '/', headers });
    await app.close();
    expectContractStatus(options, res.statusCode, res.body);
  }

  it('global options either answer requests or fail register with SluiceConfigError', async () => {
    const { seen, check } = tally();
    await fc.assert(
      fc.asyncProperty(pluginOptions, headersOf, (options, headers) =>
        answerOrRefuse(seen, options, headers, async (app) => {
          await app.register(sluice, options as never);
          app.get('/', async () => 'ok');
        }),
      ),
      { numRuns: RUNS },
    );
    check();
  });

  it('route options either answer requests or fail with SluiceConfigError when the route is added', async () => {
    const { seen, check } = tally();
    await fc.assert(
      fc.asyncProperty(routeOptions, headersOf, async (options, headers) =>
        answerOrRefuse(
          seen,
          options,
          headers,
          async (app) => {
            await app.after();
            app.get('/', { config: { rateLimit: options as never } }, async () => 'ok');
          },
          (app) => app.register(sluice, { global: false, limit: 10, window: '1m' }),
        ),
      ),
      { numRuns: RUNS },
    );
    check();
  });
});

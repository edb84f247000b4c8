import { type AlgorithmName, MemoryStore } from '@sluice/core';
import fc from '../support/fast-check.js';
import { ALGORITHMS } from './traces.js';

/**
 * Option values for fuzzing validation: each option drawn from valid values, near misses (0, 1.5,
 * '10', unknown units, wrong case) and anything at all (boxed values, maps, sparse arrays, symbols,
 * null-prototype objects), so that validation meets every type it can be handed.
 */
export const junk = fc.anything({
  maxDepth: 2,
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withNullPrototype: true,
  withObjectString: true,
  withSet: true,
  withSparseArray: true,
  withTypedArray: true,
});

const UNITS = ['ms', 's', ' s', 'second', 'm', 'minute', ' minutes', 'h', 'hours', 'd', ' day'];

/** Durations the contract accepts: whole ms, or a whole number and a unit ('250ms', '10 s', '15 minutes'). */
export const validDuration = fc.oneof(
  fc.integer({ min: 1, max: 86_400_000 }),
  fc.tuple(fc.integer({ min: 1, max: 1000 }), fc.constantFrom(...UNITS)).map(([n, u]) => `${n}${u}`),
);

const duration = fc.oneof(
  { weight: 4, arbitrary: validDuration },
  fc.integer({ min: -10, max: 10 }),
  fc.double(),
  fc.constantFrom(
    '',
    '1',
    'ms',
    '1x',
    '1 fortnight',
    '1e3ms',
    '-1s',
    '0s',
    '0.0001s',
    '1S',
    '1.s',
    ' 1s',
    '9'.repeat(400),
  ),
  fc.tuple(fc.integer(), fc.string({ maxLength: 3 })).map(([n, u]) => `${n}${u}`),
  fc.string({ maxLength: 10 }),
  junk,
);

const count = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 1000 }) },
  fc.integer(),
  fc.constantFrom(0, -1, 1.5, 2 ** 53, 2 ** 40, Number.NaN, Number.POSITIVE_INFINITY, '10', 10n),
  fc.double(),
  junk,
);

const algorithm = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ALGORITHMS) },
  fc.constantFrom('Fixed-Window', 'leaky', 'token_bucket', ''),
  fc.string({ maxLength: 15 }),
  junk,
);

const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 20 }) },
  fc.constantFrom('', 'a{b}', '{tag}', 'x'.repeat(257), 'with:colon', '%41'),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
  junk,
);

const policy = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        limit: count,
        window: duration,
        algorithm,
        name: text,
        burst: count,
        scope: fc.oneof(fc.constantFrom('subject', 'global'), fc.constantFrom('Global', 'user'), junk),
        delay: fc.oneof(fc.boolean(), junk),
      },
      { requiredKeys: [] },
    ),
  },
  junk,
);

/** Unknown keys, sometimes the names other libraries use. */
const extraKeys = fc.dictionary(
  fc.oneof(
    fc.constantFrom('max', 'windowMs', 'points', 'duration', 'keyGenerator', 'storeClient'),
    fc.string(),
  ),
  junk,
  { maxKeys: 2 },
);

const bucket = new Set<AlgorithmName>(['token-bucket', 'leaky-bucket', 'gcra']);

/** Options the contract says must be accepted: one to three valid policies and valid limiter options. */
export const validLimiterOptions = fc
  .tuple(
    fc.uniqueArray(fc.string({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 3 }),
    fc.array(
      fc.record({
        limit: fc.integer({ min: 1, max: 1000 }),
        window: validDuration,
        algorithm: fc.constantFrom(...ALGORITHMS),
        burst: fc.integer({ min: 1, max: 1000 }),
        scope: fc.constantFrom('subject' as const, 'global' as const),
        delay: fc.boolean(),
      }),
      { minLength: 3, maxLength: 3 },
    ),
    fc.record(
      {
        name: fc.string({ minLength: 1, maxLength: 256 }),
        prefix: fc.string({ minLength: 1, maxLength: 256 }).filter((p) => !/[{}]/.test(p)),
        onStoreError: fc.constantFrom('local' as const, 'allow' as const, 'deny' as const),
        storeTimeout: validDuration,
      },
      { requiredKeys: [] },
    ),
  )
  .map(([names, drawn, rest]) => ({
    ...rest,
    policies: names.map((name, i) => {
      const { burst, delay, ...p } = drawn[i]!;
      return {
        ...p,
        name,
        ...(bucket.has(p.algorithm) ? { burst } : {}),
        ...(p.algorithm === 'leaky-bucket' ? { delay } : {}),
      };
    }),
  }));

/** Any value for any option: what a mutation puts where a valid value was. */
const anyValue = fc.oneof(duration, count, algorithm, text, fc.boolean(), junk);
const LIMITER_KEYS = ['policies', 'limit', 'window', 'algorithm', 'burst', 'delay', 'scope', 'store', 'name'];
const POLICY_KEYS = ['limit', 'window', 'algorithm', 'name', 'burst', 'scope', 'delay'];

/** Valid options with one or two values replaced (in the limiter or in a policy), or deleted. */
const mutated = fc
  .tuple(
    validLimiterOptions,
    fc.array(fc.tuple(fc.constantFrom(...LIMITER_KEYS, 'prefix', 'onStoreError', 'storeTimeout'), anyValue), {
      maxLength: 1,
    }),
    fc.array(fc.tuple(fc.nat(2), fc.constantFrom(...POLICY_KEYS), fc.option(anyValue)), { maxLength: 2 }),
  )
  .map(([options, top, inPolicies]) => {
    const policies: Array<Record<string, unknown>> = options.policies.map((p) => ({ ...p }));
    for (const [i, key, value] of inPolicies) {
      const target = policies[i % policies.length]!;
      if (value === null) delete target[key];
      else target[key] = value;
    }
    const out: Record<string, unknown> = { ...options, policies };
    for (const [key, value] of top) out[key] = value;
    return out;
  });

/** Anything a caller could pass to createLimiter, valid or not. */
export const anyLimiterOptions: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: validLimiterOptions },
  { weight: 8, arbitrary: mutated },
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        fc.record(
          {
            policies: fc.oneof(
              { weight: 3, arbitrary: fc.array(policy, { maxLength: 4 }) },
              fc.sparseArray(policy, { maxLength: 4 }),
              junk,
            ),
            limit: count,
            window: duration,
            algorithm,
            burst: count,
            delay: fc.oneof(fc.boolean(), junk),
            scope: fc.oneof(fc.constantFrom('subject', 'global'), junk),
            store: fc.oneof(
              { weight: 3, arbitrary: fc.constant(null).map(() => new MemoryStore()) },
              fc.constant({}),
              junk,
            ),
            name: text,
            prefix: text,
            onStoreError: fc.oneof(
              fc.constantFrom('local', 'allow', 'deny'),
              fc.constantFrom('ignore', 'LOCAL'),
              junk,
            ),
            storeTimeout: duration,
          },
          { requiredKeys: [] },
        ),
        fc.oneof({ weight: 5, arbitrary: fc.constant({}) }, extraKeys),
      )
      .map(([known, extra]) => ({ ...extra, ...known })),
  },
  junk,
);

/** Anything a caller could pass to `new MemoryStore()`. */
export const anyMemoryStoreOptions: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.record(
          { maxKeys: count, clock: fc.oneof({ weight: 3, arbitrary: fc.constant(Date.now) }, junk) },
          { requiredKeys: [] },
        ),
        fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, extraKeys),
      )
      .map(([known, extra]) => ({ ...extra, ...known })),
  },
  fc.constant(undefined),
  junk,
);

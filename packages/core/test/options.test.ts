import { createLimiter, ErrorCodes, type LimiterOptions, MemoryStore, SluiceConfigError } from '@sluice/core';

type Case = [label: string, options: unknown, code: string, option: string];

const ok = { limit: 10, window: '1s' };
const policy = (extra: object) => ({ policies: [{ ...ok, ...extra }] });

/** Every option Sluice refuses, the code it refuses it with, and the option path the error names. */
const invalid: Case[] = [
  ['options not an object', 'ten per second', ErrorCodes.INVALID_OPTION, 'options'],
  ['options null', null, ErrorCodes.INVALID_OPTION, 'options'],
  ['options an array', [ok], ErrorCodes.INVALID_OPTION, 'options'],
  ['unknown limiter option', { ...ok, max: 5 }, ErrorCodes.UNKNOWN_OPTION, 'max'],
  ['option of another library', { ...ok, windowMs: 1000 }, ErrorCodes.UNKNOWN_OPTION, 'windowMs'],
  ['unknown policy option', policy({ limitt: 1 }), ErrorCodes.UNKNOWN_OPTION, 'policies[0].limitt'],
  ['no policy at all', {}, ErrorCodes.NO_POLICY, 'policies'],
  ['empty policies', { policies: [] }, ErrorCodes.NO_POLICY, 'policies'],
  ['policies not an array', { policies: ok }, ErrorCodes.NO_POLICY, 'policies'],
  ['policies and shorthand', { policies: [ok], limit: 5 }, ErrorCodes.NO_POLICY, 'limit'],
  ['policy not an object', { policies: [5] }, ErrorCodes.INVALID_OPTION, 'policies[0]'],
  ['limit missing', { window: '1s' }, ErrorCodes.INVALID_LIMIT, 'options.limit'],
  ['limit 0', { ...ok, limit: 0 }, ErrorCodes.INVALID_LIMIT, 'options.limit'],
  ['limit negative', policy({ limit: -1 }), ErrorCodes.INVALID_LIMIT, 'policies[0].limit'],
  ['limit fractional', policy({ limit: 1.5 }), ErrorCodes.INVALID_LIMIT, 'policies[0].limit'],
  ['limit NaN', policy({ limit: Number.NaN }), ErrorCodes.INVALID_LIMIT, 'policies[0].limit'],
  [
    'limit Infinity',
    policy({ limit: Number.POSITIVE_INFINITY }),
    ErrorCodes.INVALID_LIMIT,
    'policies[0].limit',
  ],
  ['limit a string', policy({ limit: '10' }), ErrorCodes.INVALID_LIMIT, 'policies[0].limit'],
  ['window missing', { limit: 5 }, ErrorCodes.INVALID_DURATION, 'options.window'],
  ['window 0', policy({ window: 0 }), ErrorCodes.INVALID_DURATION, 'policies[0].window'],
  ['window negative', policy({ window: -1000 }), ErrorCodes.INVALID_DURATION, 'policies[0].window'],
  ['window fractional ms', policy({ window: 0.5 }), ErrorCodes.INVALID_DURATION, 'policies[0].window'],
  ['window garbage', policy({ window: 'soon' }), ErrorCodes.INVALID_DURATION, 'policies[0].window'],
  [
    'window unknown unit',
    policy({ window: '1 fortnight' }),
    ErrorCodes.INVALID_DURATION,
    'policies[0].window',
  ],
  ['window an object', policy({ window: { s: 1 } }), ErrorCodes.INVALID_DURATION, 'policies[0].window'],
  [
    'algorithm unknown',
    policy({ algorithm: 'leaky' }),
    ErrorCodes.INVALID_ALGORITHM,
    'policies[0].algorithm',
  ],
  [
    'burst on fixed-window',
    policy({ burst: 5, algorithm: 'fixed-window' }),
    ErrorCodes.INVALID_POLICY,
    'policies[0].burst',
  ],
  ['burst on the default algorithm', policy({ burst: 5 }), ErrorCodes.INVALID_POLICY, 'policies[0].burst'],
  ['burst 0', policy({ burst: 0, algorithm: 'gcra' }), ErrorCodes.INVALID_LIMIT, 'policies[0].burst'],
  [
    'burst fractional',
    policy({ burst: 2.5, algorithm: 'token-bucket' }),
    ErrorCodes.INVALID_LIMIT,
    'policies[0].burst',
  ],
  [
    'delay on gcra',
    policy({ delay: true, algorithm: 'gcra' }),
    ErrorCodes.INVALID_POLICY,
    'policies[0].delay',
  ],
  [
    'delay not a boolean',
    policy({ delay: 'yes', algorithm: 'leaky-bucket' }),
    ErrorCodes.INVALID_OPTION,
    'policies[0].delay',
  ],
  ['scope unknown', policy({ scope: 'user' }), ErrorCodes.INVALID_OPTION, 'policies[0].scope'],
  ['policy name empty', policy({ name: '' }), ErrorCodes.INVALID_OPTION, 'policies[0].name'],
  ['policy name not a string', policy({ name: 7 }), ErrorCodes.INVALID_OPTION, 'policies[0].name'],
  [
    'duplicate policy names',
    { policies: [ok, { limit: 10, window: 1000 }] },
    ErrorCodes.DUPLICATE_POLICY,
    'policies[1].name',
  ],
  [
    'limit times window beyond exact integers',
    policy({ limit: 2 ** 30, window: '1d' }),
    ErrorCodes.INVALID_LIMIT,
    'policies[0]',
  ],
  ['store not a store', { ...ok, store: {} }, ErrorCodes.INVALID_STORE, 'store'],
  ['store a Map', { ...ok, store: new Map() }, ErrorCodes.INVALID_STORE, 'store'],
  ['name empty', { ...ok, name: '' }, ErrorCodes.INVALID_OPTION, 'name'],
  ['name too long', { ...ok, name: 'n'.repeat(257) }, ErrorCodes.INVALID_OPTION, 'name'],
  ['prefix not a string', { ...ok, prefix: 1 }, ErrorCodes.INVALID_OPTION, 'prefix'],
  ['prefix with a hash-tag brace', { ...ok, prefix: 'app{x}' }, ErrorCodes.INVALID_OPTION, 'prefix'],
  ['onStoreError unknown', { ...ok, onStoreError: 'retry' }, ErrorCodes.INVALID_OPTION, 'onStoreError'],
  ['storeTimeout garbage', { ...ok, storeTimeout: 'fast' }, ErrorCodes.INVALID_DURATION, 'storeTimeout'],
  ['storeTimeout 0', { ...ok, storeTimeout: 0 }, ErrorCodes.INVALID_DURATION, 'storeTimeout'],
  ['denyCacheMs negative', { ...ok, denyCacheMs: -1 }, ErrorCodes.INVALID_DURATION, 'denyCacheMs'],
  ['denyCacheMs garbage', { ...ok, denyCacheMs: 'soon' }, ErrorCodes.INVALID_DURATION, 'denyCacheMs'],
];

describe('limiter options', () => {
  it.each(invalid)('%s throws SluiceConfigError', (_label, options, code, option) => {
    let error: unknown;
    try {
      createLimiter(options as LimiterOptions);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SluiceConfigError);
    const e = error as SluiceConfigError;
    expect(e).toMatchObject({ name: 'SluiceConfigError', code, option });
    expect(e.code).toMatch(/^ERR_SLUICE_/);
    expect(e.message.startsWith(`${option}: `)).toBe(true);
  });

  it('names the value given in the message', () => {
    expect(() => createLimiter({ limit: 0, window: '1s' })).toThrow(/got 0/);
    expect(() => createLimiter({ limit: 1, window: 'soon' })).toThrow(/got "soon"/);
    expect(() => createLimiter({ limit: 1, window: '1s', algorithm: 'x' as never })).toThrow(/got "x"/);
  });

  it('never echoes a long (possibly secret) value', () => {
    const secret = `sk_live_${'x'.repeat(60)}`;
    expect(() => createLimiter({ limit: 1, window: secret })).toThrow(/a string of 68 characters/);
    expect(() => createLimiter({ limit: 1, window: secret })).not.toThrow(new RegExp(secret));
  });

  it('uses every code in ErrorCodes for options except the runtime warnings and the adapters’ own', () => {
    const used = new Set(invalid.map(([, , code]) => code));
    const unused = Object.values(ErrorCodes).filter((c) => !used.has(c));
    const elsewhere = [
      ErrorCodes.CONFLICTING_OPTIONS,
      ErrorCodes.COST_EXCEEDS_CAPACITY,
      ErrorCodes.NAME_REUSE,
      ErrorCodes.STORE_DEGRADED,
      ErrorCodes.STORE_RECOVERED,
      ErrorCodes.UNKNOWN_PLAN,
      ErrorCodes.WINDOW_IN_SECONDS, // a warning: test/regressions/foreign-options.test.ts
      ErrorCodes.OFFLINE_QUEUE_OFF, // a warning: test/regressions/offline-queue.test.ts
      ErrorCodes.NOT_CONNECTED, // a warning: test/regressions/postgres-unconnected-client.test.ts
      ErrorCodes.FOREIGN_TABLE, // at a PostgresStore's first use: test/regressions/postgres-foreign-table.test.ts
    ];
    expect(unused.sort()).toEqual(elsewhere.sort());
  });

  it('names default policies after their limit and window in the largest exact unit', () => {
    const names = createLimiter({
      policies: [
        { limit: 100, window: '15m' },
        { limit: 5, window: '1s' },
        { limit: 10, window: '250ms' },
        { limit: 1, window: 90_000 },
        { limit: 2, window: '1d' },
        { limit: 3, window: '36 hours' },
      ],
    }).policies.map((p) => p.name);
    expect(names).toEqual(['100-per-15m', '5-per-1s', '10-per-250ms', '1-per-90s', '2-per-1d', '3-per-36h']);
  });

  it('fills defaults and freezes the parsed config', () => {
    const limiter = createLimiter({ limit: 5, window: '1m' });
    expect(limiter.config).toMatchObject({
      name: 'default',
      prefix: 'sluice',
      onStoreError: 'local',
      storeTimeoutMs: 250,
      denyCacheMs: 1000,
    });
    expect(limiter.config.policies[0]).toMatchObject({
      algorithm: 'sliding-window',
      scope: 'subject',
      delay: false,
      windowMs: 60_000,
      params: { limit: 5, windowMs: 60_000, burst: 5 },
    });
    expect(Object.isFrozen(limiter.config)).toBe(true);
    expect(Object.isFrozen(limiter.config.policies[0])).toBe(true);
    expect(
      createLimiter({ limit: 5, window: '1s', algorithm: 'leaky-bucket' }).config.policies[0],
    ).toMatchObject({
      delay: true,
      params: { burst: 5 },
    });
    expect(createLimiter({ limit: 5, window: '1s', algorithm: 'gcra', burst: 9 }).policies[0]).toMatchObject({
      limit: 5,
    });
  });

  it('treats undefined as absent', () => {
    expect(() =>
      createLimiter({ limit: 1, window: 1000, algorithm: undefined, store: undefined, name: undefined }),
    ).not.toThrow();
  });
});

describe('MemoryStore options', () => {
  it.each([
    ['maxKeys 0', { maxKeys: 0 }, ErrorCodes.INVALID_LIMIT, 'MemoryStore.maxKeys'],
    ['maxKeys fractional', { maxKeys: 1.5 }, ErrorCodes.INVALID_LIMIT, 'MemoryStore.maxKeys'],
    ['maxKeys a string', { maxKeys: '10' }, ErrorCodes.INVALID_LIMIT, 'MemoryStore.maxKeys'],
    ['clock not a function', { clock: 5 }, ErrorCodes.INVALID_OPTION, 'MemoryStore.clock'],
    ['unknown option', { max: 5 }, ErrorCodes.UNKNOWN_OPTION, 'MemoryStore.max'],
    ['options not an object', 5, ErrorCodes.INVALID_OPTION, 'MemoryStore'],
  ])('%s throws SluiceConfigError', (_label, options, code, option) => {
    expect(() => new MemoryStore(options as never)).toThrow(SluiceConfigError);
    try {
      new MemoryStore(options as never);
    } catch (e) {
      expect(e).toMatchObject({ code, option });
    }
  });
});

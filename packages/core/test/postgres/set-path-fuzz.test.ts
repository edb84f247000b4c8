import {
  createLimiter,
  type Decision,
  type Limiter,
  MemoryStore,
  PostgresStore,
  type Store,
} from '@sluice/core';
import { manualClock } from '@sluice/core/testing';
import { describePostgres } from '../../../../test/support/postgres.js';
import { random } from '../../src/testing/trace.js';
import { makeClient, serverPerFile, uniquePrefix } from './clients.js';

/**
 * call.sql's set-based path (a turn of consumes and peeks on distinct keys, sliding-window and
 * gcra/token-bucket/leaky-bucket policies, decided in one statement) against MemoryStore one call at a
 * time: random turns of seeded size, costs 1, 2, above the limit and 2^40, clock steps from 0 to past
 * expiry; and subjects that a text[] literal could misread (quotes, backslashes, braces, commas, NULL,
 * unicode, lone surrogates, 10 kB). Held on 1e0ef51 (hostile review).
 */

const plain = (d: Decision | undefined) =>
  d === undefined ? 'reset' : JSON.stringify(d, (_k, v) => (typeof v === 'function' ? undefined : v));

const SUBJECTS = [
  "a'b",
  'a\\b',
  'a\\',
  '\\',
  '"',
  '\\"',
  '{a,b}',
  '{',
  '}',
  ',',
  'NULL',
  'null',
  '',
  ' ',
  ' x ',
  "'); DROP TABLE x; --",
  "E'\\'",
  '$$',
  '$1',
  'é😀中',
  'x'.repeat(10_000),
  '"{\\"}"',
  '\t\n\r',
  '\uD800',
  '\uDC00',
];

describePostgres('call.sql set-based path against MemoryStore: random turns, hostile subjects', () => {
  const db = serverPerFile();

  function of(store: Store, prefix: string): Limiter[] {
    const common = { prefix, store, storeTimeout: '30s', onStoreError: 'deny' } as const;
    return [
      createLimiter({ ...common, name: 'sw', limit: 4, window: '1s' }),
      createLimiter({ ...common, name: 'tb', limit: 3, window: '1s', algorithm: 'token-bucket', burst: 5 }),
      createLimiter({ ...common, name: 'lb', limit: 3, window: '2s', algorithm: 'leaky-bucket' }),
      createLimiter({ ...common, name: 'gc', limit: 7, window: '3s', algorithm: 'gcra', burst: 2 }),
      createLimiter({
        ...common,
        name: 'two',
        policies: [
          { limit: 5, window: '1s', algorithm: 'sliding-window' },
          { limit: 2, window: '500ms', algorithm: 'gcra', burst: 3 },
        ],
      }),
    ];
  }

  test.each([1, 2, 3, 4])('seed %i', async (seed) => {
    const client = await makeClient('pg Pool', db.server.url, { max: 2 });
    const clock = manualClock();
    const prefix = uniquePrefix(`fz${seed}`);
    const sql = of(new PostgresStore({ client: client as never, clock }), prefix);
    const mem = of(new MemoryStore({ clock }), prefix);
    await sql[0]!.peek('warm-up');
    const r = random(seed);
    for (let round = 0; round < 60; round++) {
      const n = 1 + Math.floor(r() * 12);
      const plan: Array<[number, string, 'c' | 'p', number]> = [];
      const used = new Set<string>();
      for (let i = 0; i < n; i++) {
        const li = Math.floor(r() * 5);
        const sub = `s${Math.floor(r() * 4)}`;
        if (used.has(`${li}/${sub}`)) continue; // distinct keys: the set-based path
        used.add(`${li}/${sub}`);
        const x = r();
        const cost = x < 0.05 ? 2 ** 40 : x < 0.2 ? 6 : x < 0.5 ? 2 : 1;
        plan.push([li, sub, r() < 0.2 ? 'p' : 'c', cost]);
      }
      const run = (ls: Limiter[]) =>
        Promise.all(
          plan.map(([li, sub, op, cost]) =>
            op === 'p' ? ls[li]!.peek(sub, { cost }) : ls[li]!.consume(sub, { cost }),
          ),
        );
      const a = await run(sql);
      const b = await run(mem);
      expect({ round, plan, d: a.map(plain) }).toEqual({ round, plan, d: b.map(plain) });
      const y = r();
      clock.advance(y < 0.5 ? Math.floor(r() * 300) : y < 0.9 ? Math.floor(r() * 1500) : 10_000);
    }
  });

  const hostileOf = (store: Store, prefix: string): Limiter[] => {
    const common = { prefix, store, storeTimeout: '30s', onStoreError: 'deny' } as const;
    return [
      createLimiter({ ...common, name: 'sw', limit: 2, window: '1m' }),
      createLimiter({ ...common, name: 'tb', limit: 2, window: '1m', algorithm: 'token-bucket' }),
    ];
  };
  test.each(['pg Pool', 'postgres.js'] as const)(
    '%s: each subject its own counter, as on MemoryStore',
    async (name) => {
      const client = await makeClient(name, db.server.url, { max: 2 });
      const clock = manualClock();
      const prefix = uniquePrefix('hostile');
      const sql = hostileOf(new PostgresStore({ client: client as never, clock }), prefix);
      const mem = hostileOf(new MemoryStore({ clock }), prefix);
      await sql[0]!.peek('warm-up');
      for (let round = 0; round < 3; round++) {
        const run = (ls: Limiter[]) =>
          Promise.all(SUBJECTS.flatMap((s) => ls.map((l) => (round === 2 ? l.peek(s) : l.consume(s)))));
        const a = (await run(sql)).map(plain);
        const b = (await run(mem)).map(plain);
        expect(a).toEqual(b);
      }
    },
  );

  /**
   * The set-based path against the per-call path of the same build, on stores sharing keys across
   * clocks: a store on the database's clock and stores on callers' clocks behind and ahead of it
   * (stale states, expired rows). Each turn runs twice, on two prefixes: once alone (set-based), once
   * beside a concurrency call on a key of its own (which sends the whole turn down the per-call path).
   */
  test('set-based and per-call paths agree across clocks (database, ahead, behind), turn by turn', async () => {
    const client = await makeClient('pg Pool', db.server.url, { max: 2 });
    const ahead = manualClock(Date.now() + 3_600_000);
    const behind = manualClock(Date.now() - 3_600_000);
    const stores: Store[] = [
      new PostgresStore({ client: client as never }),
      new PostgresStore({ client: client as never, clock: ahead }),
      new PostgresStore({ client: client as never, clock: behind }),
    ];
    const common = { storeTimeout: '30s', onStoreError: 'deny' } as const;
    const build = (prefix: string) =>
      stores.map((store) => [
        createLimiter({ ...common, prefix, store, name: 'sw', limit: 5, window: '2h' }),
        createLimiter({
          ...common,
          prefix,
          store,
          name: 'tb',
          limit: 4,
          window: '2h',
          algorithm: 'token-bucket',
        }),
        createLimiter({
          ...common,
          prefix,
          store,
          name: 'gc',
          limit: 3,
          window: '90m',
          algorithm: 'gcra',
          burst: 3,
        }),
      ]);
    const setP = build(uniquePrefix('set'));
    const oneP = build(uniquePrefix('one'));
    // Per store: a store batches its own calls.
    const ccPrefix = uniquePrefix('cc');
    const forcers = stores.map((store) =>
      createLimiter({
        ...common,
        prefix: ccPrefix,
        store,
        limit: 1000,
        window: '1h',
        algorithm: 'concurrency',
      }),
    );
    await forcers[0]!.peek('warm');
    let denied = 0;
    const view = (d: Decision) => [d.allowed, d.remaining, d.degraded === true];
    for (let round = 0; round < 24; round++) {
      const s = round % 3;
      // One store's turn over every limiter and two subjects: distinct keys.
      const turn = (ls: Limiter[][]) =>
        ls[s]!.flatMap((l) => ['a', 'b'].map((sub) => (round % 4 === 3 ? l.peek(sub) : l.consume(sub))));
      const a = await Promise.all(turn(setP));
      const b = await Promise.all([...turn(oneP), forcers[s]!.consume(`r${round}`)]);
      expect({ round, d: a.map(view) }).toEqual({ round, d: b.slice(0, -1).map(view) });
      denied += a.filter((d) => !d.allowed).length;
      if (round % 6 === 5) {
        ahead.advance(1_800_000);
        behind.advance(1_800_000);
      }
    }
    expect(denied).toBeGreaterThan(10);
  });
});

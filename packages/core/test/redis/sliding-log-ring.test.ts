import {
  createLimiter,
  type Limiter,
  MemoryStore,
  type Policy,
  type RedisClient,
  RedisStore,
} from '@sluice/core';
import { manualClock, randomTrace, runTrace, type TraceStep } from '@sluice/core/testing';
import type Redis from 'ioredis';
import { describeRedis, sharedCluster, sharedRedis } from '../../../../test/support/redis.js';
import { expectOnlyWarnings } from '../../../../test/support/warnings.js';
import lua from '../../src/algorithms/sliding-log/sliding-log.lua';
import { closeClients, clusterClient, redisTimeMs, standaloneClient, uniquePrefix } from './clients.js';

/**
 * The sliding log on Redis above a small limit is a ring updated in place (sliding-log.lua), below it
 * the older format, a MessagePack array read and written whole. These pin the ring's edges against
 * MemoryStore (wrap-around, growth, cost > 1, refunds, peeks, a limit changed on the same key, across
 * the threshold both ways), reading a log a release before wrote, what that release reads of a ring,
 * the encoders with and without Redis's struct library, and the key's TTL under Redis TIME.
 */
const START = 1_700_000_000_000;
/**
 * Limiters on Redis wait for its answer: past the default 250 ms (a loaded machine) a call would be
 * decided in process, which is not what these compare (failed so under CI on 674771e).
 */
const WAIT = { storeTimeout: '30s' } as const;
const MARK = Buffer.from([0x94, 0, 0]);
/** A decision as data. */
const strip = ({ refund: _r, release: _l, ...d }: Awaited<ReturnType<Limiter['consume']>>) => d;

describeRedis('sliding log on Redis: the ring', () => {
  let client: Redis;

  beforeAll(async () => {
    client = standaloneClient(await sharedRedis());
  });

  afterAll(closeClients);

  const logPolicy = (limit: number, window: string): Policy => ({
    name: 'log',
    limit,
    window,
    algorithm: 'sliding-log',
  });

  /** The one key of `prefix`, as bytes. */
  async function storedValue(prefix: string): Promise<Buffer> {
    const keys = await client.keys(`${prefix}:*`);
    expect(keys).toHaveLength(1);
    return (await client.getBuffer(keys[0]!))!;
  }

  /** Runs `trace` on Redis (through `redis`, keys under `prefix`) and on MemoryStore: the same decisions. */
  async function expectAsMemory(policies: Policy[], trace: TraceStep[], redis: RedisClient, prefix: string) {
    const options = { name: 'ring', policies };
    const at = { start: START };
    const onRedis = await runTrace(
      (clock) =>
        createLimiter({ ...WAIT, ...options, prefix, store: new RedisStore({ client: redis, clock }) }),
      trace,
      at,
    );
    const inMemory = await runTrace(
      (clock) => createLimiter({ ...options, store: new MemoryStore({ clock }) }),
      trace,
      at,
    );
    expect(onRedis).toEqual(inMemory);
  }

  test.each([
    [60, '40ms'],
    [200, '150ms'],
    [10, '40ms'],
  ])(
    'limit %i over %s decides as MemoryStore through wrap-around, growth, costs, refunds and peeks',
    async (limit, window) => {
      for (let seed = 1; seed <= 4; seed++) {
        const trace = randomTrace({ seed, length: 600, subjects: ['a', 'b'], maxCost: 4, maxAdvanceMs: 6 });
        const prefix = uniquePrefix('ring');
        await expectAsMemory([logPolicy(limit, window)], trace, client, prefix);
        // Above the threshold the key holds a ring; at 10, the older format.
        const keys = (await client.keys(`${prefix}:*`)).filter((k) => !k.includes('#r'));
        expect(keys.length).toBeGreaterThan(0);
        const head = (await client.getrangeBuffer(keys[0]!, 0, 2)) as Buffer;
        expect(head.equals(MARK)).toBe(limit > 48);
      }
    },
  );

  test('on a Redis Cluster, a ring decides as MemoryStore (its keys declared, in one slot)', async () => {
    const trace = randomTrace({
      seed: 7,
      length: 400,
      subjects: ['a', 'b', 'c'],
      maxCost: 4,
      maxAdvanceMs: 6,
    });
    const global: Policy = {
      name: 'g',
      limit: 300,
      window: '90ms',
      algorithm: 'sliding-log',
      scope: 'global',
    };
    const cluster = clusterClient(await sharedCluster());
    await expectAsMemory([logPolicy(120, '60ms'), global], trace, cluster, uniquePrefix('cluster'));
  });

  /** The entries of a ring value, unrolled: [t1, c1, ...] (the layout in sliding-log.lua). */
  function unrolled(raw: Buffer): number[] {
    const head = raw.readUInt32BE(23);
    const count = raw.readUInt32BE(28);
    const cap = raw.readUInt32BE(47) / 10;
    const log: number[] = [];
    for (let k = 0; k < count; k++) {
      const p = 51 + 10 * ((head + k) % cap);
      log.push(raw.readUIntBE(p, 6), raw.readUInt32BE(p + 6));
    }
    return log;
  }

  test('a ring that wraps and grows keeps its entries in order; MessagePack reads it as one entry of every cost', async () => {
    const clock = manualClock(START);
    const prefix = uniquePrefix('wrap');
    const limiter = createLimiter({
      ...WAIT,
      prefix,
      policies: [logPolicy(200, '50ms')],
      store: new RedisStore({ client, clock }),
    });
    // 70 calls 1 ms apart: the ring grows to 64 entries, and the calls past 64 wrap round its end.
    let wrapped = false;
    for (let i = 0; i < 70; i++) {
      expect((await limiter.consume('s', { cost: 1 + (i % 3) })).allowed).toBe(true);
      if (i > 0 && i % 8 === 0) {
        const raw = await storedValue(prefix);
        if (raw.readUInt32BE(23) + raw.readUInt32BE(28) > raw.readUInt32BE(47) / 10) wrapped = true;
      }
      clock.advance(1);
    }
    expect(wrapped).toBe(true);
    const raw = await storedValue(prefix);
    expect(raw.subarray(0, 3).equals(MARK)).toBe(true);
    expect(raw.readUInt32BE(47)).toBe(10 * 64);
    // The entries still in the window at the last call (START + 69): from START + 20 on.
    const expected: number[] = [];
    for (let i = 20; i < 70; i++) expected.push(START + i, 1 + (i % 3));
    expect(unrolled(raw)).toEqual(expected);
    // What a worker of the release before reads: (0, 0), then the newest entry holding the whole sum;
    // the objects after it decode too.
    const [first, second, ring] = (await client.eval(
      "local a, b, c = cmsgpack.unpack(redis.call('GET', KEYS[1])); return { cjson.encode(a), cjson.encode(b), #c }",
      1,
      (
        await client.keys(`${prefix}:*`)
      )[0]!,
    )) as [string, string, number];
    const sum = expected.reduce((n, x, i) => (i % 2 === 1 ? n + x : n), 0);
    expect(JSON.parse(first)).toEqual([0, 0, START + 69, sum]);
    expect(JSON.parse(second).slice(1, 3)).toEqual([50, 1 + (69 % 3)]);
    expect(ring).toBe(10 * 64);
  });

  test('reads a log a release before wrote (a MessagePack array), and writes it back as a ring', async () => {
    const clock = manualClock(START + 1000);
    const prefix = uniquePrefix('old');
    const options = { policies: [logPolicy(100, '1s')] };
    const limiter = createLimiter({ ...WAIT, ...options, prefix, store: new RedisStore({ client, clock }) });
    // The key of subject 's', named after the key of another subject.
    await limiter.consume('probe');
    const key = (await client.keys(`${prefix}:*`))[0]!.replace('{probe}', '{s}');
    // What the release before wrote for 40 at START + 100, 30 at START + 500 and 20 at START + 900.
    await client.eval(
      "redis.call('SET', KEYS[1], cmsgpack.pack(cjson.decode(ARGV[1])), 'PX', 60000)",
      1,
      key,
      JSON.stringify([START + 100, 40, START + 500, 30, START + 900, 20]),
    );
    const reference = manualClock(START + 100);
    const inMemory = createLimiter({ ...options, store: new MemoryStore({ clock: reference }) });
    await inMemory.consume('s', { cost: 40 });
    reference.advance(400);
    await inMemory.consume('s', { cost: 30 });
    reference.advance(400);
    await inMemory.consume('s', { cost: 20 });
    reference.set(START + 1000);
    for (const [advance, cost] of [
      [0, 5],
      [0, 6],
      [150, 50],
      [300, 20],
      [100, 1],
    ] as const) {
      clock.advance(advance);
      reference.advance(advance);
      expect(strip(await limiter.consume('s', { cost }))).toEqual(
        strip(await inMemory.consume('s', { cost })),
      );
    }
    const raw = (await client.getBuffer(key))!;
    expect(raw.subarray(0, 3).equals(MARK)).toBe(true);
    // 6 and 50 were denied; 100 and 500 have left.
    expect(unrolled(raw)).toEqual([START + 900, 20, START + 1000, 5, START + 1450, 20, START + 1550, 1]);
  });

  test('encodes the same bytes with Redis struct library and without it', async () => {
    const run = (source: string) => `
local limit = 100
local function chunk()
${source}
end
local step, refund, _, _, _, load, save, decode = chunk()
local now = 1700000000000
for i = 1, 180 do
  now = now + (i % 3)
  local cost = 1 + (i % 4)
  local state = load(KEYS[1], limit)
  local ok, next, _, _, _, _, expiresAt = step(state, now, cost, limit, 60)
  if ok then save(KEYS[1], next, now, cost, expiresAt - now, 60000) end
end
return { redis.call('GET', KEYS[1]), cjson.encode(decode(redis.call('GET', KEYS[1]))) }`;
    const plain = lua.replace('pcall(function() return struct end)', 'pcall(function() return nil end)');
    expect(plain).not.toBe(lua);
    const prefix = uniquePrefix('struct');
    const [withStruct, withStructLog] = (await client.eval(run(lua), 1, `${prefix}:a`)) as [string, string];
    const [without, withoutLog] = (await client.eval(run(plain), 1, `${prefix}:b`)) as [string, string];
    expect(Buffer.from(without, 'latin1').equals(Buffer.from(withStruct, 'latin1'))).toBe(true);
    expect(withoutLog).toBe(withStructLog);
    expect(JSON.parse(withStructLog).length).toBeGreaterThan(2 * 20);
  });

  test('under Redis TIME a ring key lives until its log stops mattering, its TTL written about once a window', async () => {
    const prefix = uniquePrefix('ttl');
    const limiter = createLimiter({
      ...WAIT,
      prefix,
      policies: [logPolicy(500, '300ms')],
      store: new RedisStore({ client }),
    });
    const pexpires = async () =>
      Number(/^cmdstat_pexpire:calls=(\d+)/m.exec(await client.info('commandstats'))?.[1] ?? 0);
    const before = await pexpires();
    const started = Date.now();
    let calls = 0;
    // Over two windows and 20 calls, however slow the machine (a count of calls within 700 ms was not).
    while (Date.now() - started < 700 || calls <= 20) {
      // Before the call, on Redis's clock: the call decided at this time or later.
      const asked = await redisTimeMs(client);
      const d = await limiter.consume('u');
      expect(d.allowed).toBe(true);
      calls++;
      const key = (await client.keys(`${prefix}:*`))[0]!;
      const [[, ttl], [, time]] = (await client.multi().pttl(key).time().exec()) as [
        [null, number],
        [null, [string, string]],
      ];
      const expiresAt = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000) + ttl;
      // The newest entry is this call's (resetMs: the whole window): the key lives at least that long
      // after the call, so at least that long after `asked` (1 ms: PTTL and TIME round down). Not
      // against the clock after the call, which a loaded machine moved 7 ms on before PTTL read it
      // (CI on 52f58b4, Node 20, where 5 ms was allowed).
      expect(expiresAt).toBeGreaterThanOrEqual(asked + d.resetMs - 1);
      expect(ttl).toBeLessThanOrEqual(2 * 300 + 1);
      await new Promise((r) => setTimeout(r, 5));
    }
    // Other suites share the server: at most a few rewrites of this key's TTL beyond its windows.
    expect((await pexpires()) - before).toBeLessThan(calls / 2);
  });

  test.each([10, 100])(
    'at limit %i, a key of another type (a hash other code wrote) reads as none and is replaced, as MGET reads it',
    async (limit) => {
      const prefix = uniquePrefix('foreign');
      const limiter = createLimiter({
        ...WAIT,
        prefix,
        policies: [logPolicy(limit, '1s')],
        store: new RedisStore({ client, clock: manualClock(START) }),
      });
      await limiter.consume('probe');
      const key = (await client.keys(`${prefix}:*`))[0]!.replace('{probe}', '{s}');
      await client.hset(key, 'field', '1');
      const decision = await limiter.consume('s');
      expect(decision.degraded).toBeUndefined();
      expect([decision.allowed, decision.remaining]).toEqual([true, limit - 1]);
      expect(await client.type(key)).toBe('string');
      expect((await limiter.consume('s')).remaining).toBe(limit - 2);
    },
  );

  test('a ring three quarters empty is written smaller: a burst that has left does not keep its room', async () => {
    const clock = manualClock(START);
    const prefix = uniquePrefix('shrink');
    const policies = [logPolicy(2000, '1s')];
    const onRedis = createLimiter({ ...WAIT, prefix, policies, store: new RedisStore({ client, clock }) });
    const inMemory = createLimiter({ policies, store: new MemoryStore({ clock }) });
    const both = async () =>
      expect(strip(await onRedis.consume('s'))).toEqual(strip(await inMemory.consume('s')));
    for (let i = 0; i < 1500; i++) {
      await both();
      clock.advance(i % 2);
    }
    const key = (await client.keys(`${prefix}:*`))[0]!;
    expect(await client.strlen(key)).toBeGreaterThan(10 * 750);
    // One call every 300 ms for a minute: at most four entries in the window.
    for (let i = 0; i < 200; i++) {
      clock.advance(300);
      await both();
    }
    expect(await client.strlen(key)).toBeLessThanOrEqual(51 + 10 * 64);
  });

  /**
   * A caller's clock outside what a ring's 6-byte times hold ([0, 2^48)) writes the older format; a
   * call back inside it then finds a log holding such a time, which a ring cannot hold either: the log
   * stays in the older format rather than wrap the time (struct) or fail the call (plain Lua).
   */
  test.each([
    ['before 1970', -5, 10, 2000],
    ['from 2^48 on', 2 ** 48 + 5, 2 ** 48 - 5, 2 ** 48 + 2000],
  ])(
    'a log holding a time %s, charged again inside the range, decides as MemoryStore',
    async (_, first, second, later) => {
      const prefix = uniquePrefix('range');
      const options = { name: 'range', policies: [logPolicy(60, '1s')] };
      const clock = manualClock(first);
      const onRedis = createLimiter({
        ...WAIT,
        ...options,
        prefix,
        store: new RedisStore({ client, clock }),
      });
      const inMemory = createLimiter({ ...options, store: new MemoryStore({ clock }) });
      const both = async (cost: number, peek = false) => {
        const op = peek ? 'peek' : 'consume';
        const [r, m] = [strip(await onRedis[op]('s', { cost })), strip(await inMemory[op]('s', { cost }))];
        expect(r).toEqual(m);
        return r;
      };
      expect((await both(30)).allowed).toBe(true);
      clock.set(second);
      expect((await both(1)).allowed).toBe(true);
      // The first charge is still inside the window: 29 more fit, not 30.
      clock.set(second + 1);
      expect((await both(30)).allowed).toBe(false);
      expect((await both(29)).allowed).toBe(true);
      // Every charge has left the window.
      clock.set(later);
      expect((await both(60, true)).remaining).toBe(60);
    },
  );
});

describeRedis('sliding log on Redis: a limit changed on the same key', () => {
  const warned = expectOnlyWarnings('ERR_SLUICE_NAME_REUSE');
  let client: Redis;

  beforeAll(async () => {
    client = standaloneClient(await sharedRedis());
  });

  afterAll(closeClients);

  /** Limiters of one name and policy name (one key per subject), of the limit given, on Redis or in memory. */
  function sameKey(window: string) {
    const prefix = uniquePrefix('limits');
    const clock = manualClock(START);
    const make = (limit: number, store: RedisStore | MemoryStore) =>
      createLimiter({
        name: 'l',
        prefix,
        policies: [{ name: 'p', limit, window, algorithm: 'sliding-log' }],
        store,
        ...WAIT,
      });
    return { make, clock, redis: new RedisStore({ client, clock }), memory: new MemoryStore({ clock }) };
  }

  test.each([
    [200, 60],
    [200, 10],
    [10, 200],
    [60, 100],
  ])('from limit %i to %i and back, as MemoryStore', async (wide, narrow) => {
    const { make, redis, memory, clock } = sameKey('80ms');
    const onRedis = [make(wide, redis), make(narrow, redis)];
    const inMemory = [make(wide, memory), make(narrow, memory)];
    let which = 0;
    for (let i = 0; i < 400; i++) {
      if (i % 37 === 0) which = 1 - which;
      const cost = 1 + (i % 5);
      expect(strip(await onRedis[which]!.consume('s', { cost }))).toEqual(
        strip(await inMemory[which]!.consume('s', { cost })),
      );
      clock.advance(i % 4);
    }
    expect(warned.codes).toContain('ERR_SLUICE_NAME_REUSE');
  });

  test('a cost of 2^32 or more that a limit above 2^32 - 1 charged is not written into a ring by a refund of a ring policy', async () => {
    const { make, redis, memory, clock } = sameKey('1s');
    const [ringR, wideR] = [make(100, redis), make(2 ** 40, redis)];
    const [ringM, wideM] = [make(100, memory), make(2 ** 40, memory)];
    const small = [await ringR.consume('s'), await ringM.consume('s')];
    clock.advance(1);
    expect(strip(await wideR.consume('s', { cost: 2 ** 32 + 5 }))).toEqual(
      strip(await wideM.consume('s', { cost: 2 ** 32 + 5 })),
    );
    clock.advance(1);
    // Written back by the ring policy's refund: the wide cost must stay whole.
    await small[0]!.refund!();
    await small[1]!.refund!();
    for (const advance of [1, 998, 1, 500]) {
      clock.advance(advance);
      expect(strip(await ringR.consume('s'))).toEqual(strip(await ringM.consume('s')));
    }
    expect(warned.codes).toContain('ERR_SLUICE_NAME_REUSE');
  });
});

/**
 * RedisStore over @upstash/redis (and @vercel/kv, the same client): Redis over HTTP, through the
 * Upstash REST stand-in in front of a real redis-server. What HTTP changes is tested here: round trips
 * per decision, calls sharing one, and errors that must not carry the command (keys hold subjects).
 * The decisions themselves are the parity, atomicity and SCRIPT FLUSH suites', which run it too.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createLimiter, DiagnosticChannels, RedisStore, type StoreErrorMessage } from '@sluice/core';
import { Redis } from '@upstash/redis';
import { createClient as createKv } from '@vercel/kv';
import IORedis from 'ioredis';
import { startUpstashStandIn, type UpstashStandIn } from '../../../../scripts/upstash-rest.cjs';
import { describeRedis, sharedRedis } from '../../../../test/support/redis.js';
import { recordWarnings } from '../../../../test/support/warnings.js';
import { uniquePrefix } from './clients.js';

describeRedis('RedisStore over @upstash/redis', () => {
  let standIn: UpstashStandIn;
  let admin: IORedis;

  beforeAll(async () => {
    const url = await sharedRedis();
    standIn = await startUpstashStandIn(url);
    admin = new IORedis(url);
  });

  afterAll(async () => {
    admin.disconnect();
    await standIn.close();
  });

  const twoTiers = [
    { limit: 10, window: '1s', algorithm: 'token-bucket' as const },
    { limit: 1000, window: '1h' },
  ];

  /** A loaded machine's first HTTP round trips may take longer than the default 250 ms storeTimeout. */
  const slowMachine = () => ({ prefix: uniquePrefix('up'), storeTimeout: '10s' });

  /** HTTP requests made while `run` runs. */
  async function requestsDuring(run: () => Promise<unknown>): Promise<number> {
    const before = standIn.requests.length;
    await run();
    return standIn.requests.length - before;
  }

  test.each([
    ['auto-pipelining (the default)', true],
    ['auto-pipelining off', false],
  ])('%s: a two-tier decision is one HTTP request', async (_label, enableAutoPipelining) => {
    const client = new Redis({
      url: standIn.url,
      token: standIn.token,
      enableTelemetry: false,
      enableAutoPipelining,
    });
    const limiter = createLimiter({
      policies: twoTiers,
      store: new RedisStore({ client }),
      ...slowMachine(),
    });
    await limiter.consume('warm'); // the script is loaded by then
    expect(await requestsDuring(() => limiter.consume('user-1'))).toBe(1);
    // Both tiers charged by that one request (the token bucket refills meanwhile: at least 8 left).
    const [burst, hourly] = (await limiter.consume('user-1')).policies;
    expect([burst!.remaining >= 8 && burst!.remaining < 10, hourly!.remaining]).toEqual([true, 998]);
  });

  test('concurrent calls share one HTTP request', async () => {
    const client = new Redis({ url: standIn.url, token: standIn.token, enableTelemetry: false });
    const limiter = createLimiter({
      policies: twoTiers,
      store: new RedisStore({ client }),
      ...slowMachine(),
    });
    await limiter.consume('warm');
    // A batch (one script run) holds up to 32 calls: as many as a busy Worker makes in one turn.
    const subjects = Array.from({ length: 32 }, (_, i) => `user-${i}`);
    let decisions: { allowed: boolean }[] = [];
    const requests = await requestsDuring(async () => {
      decisions = await Promise.all(subjects.map((s) => limiter.consume(s)));
    });
    expect(decisions.every((d) => d.allowed)).toBe(true);
    expect(requests).toBe(1);
  });

  test('NOSCRIPT: after SCRIPT FLUSH the script is sent again and the call decided', async () => {
    const client = new Redis({ url: standIn.url, token: standIn.token, enableTelemetry: false });
    const limiter = createLimiter({
      limit: 2,
      window: '1m',
      store: new RedisStore({ client }),
      ...slowMachine(),
    });
    expect((await limiter.consume('a')).remaining).toBe(1);
    await admin.script('FLUSH');
    const decision = await limiter.consume('a');
    expect([decision.allowed, decision.remaining, decision.degraded]).toEqual([true, 0, undefined]);
  });

  test('@vercel/kv: the same client, accepted and decided alike', async () => {
    const kv = createKv({ url: standIn.url, token: standIn.token, enableTelemetry: false });
    const options = slowMachine();
    const limiter = createLimiter({
      limit: 2,
      window: '1m',
      store: new RedisStore({ client: kv }),
      ...options,
    });
    const tcp = createLimiter({
      limit: 2,
      window: '1m',
      store: new RedisStore({ client: admin }),
      ...options,
    });
    expect((await limiter.consume('shared')).remaining).toBe(1);
    // The same keys as a client over TCP: one counter.
    expect((await tcp.consume('shared')).remaining).toBe(0);
    expect((await limiter.consume('shared')).allowed).toBe(false);
  });

  describe('a failing REST endpoint', () => {
    const warnings = recordWarnings();

    test('is a store failure: onStoreError decides, and the error names no key, subject or token', async () => {
      const client = new Redis({ url: standIn.url, token: 'wrong-token', enableTelemetry: false });
      const heard: StoreErrorMessage[] = [];
      const listen = (message: unknown) => heard.push(message as StoreErrorMessage);
      subscribe(DiagnosticChannels.storeError, listen);
      try {
        const limiter = createLimiter({
          limit: 5,
          window: '1m',
          store: new RedisStore({ client }),
          onStoreError: 'deny',
          prefix: uniquePrefix('up'),
        });
        const decision = await limiter.consume('203.0.113.99');
        expect([decision.allowed, decision.degraded, decision.reason]).toEqual([false, true, 'store-error']);
      } finally {
        unsubscribe(DiagnosticChannels.storeError, listen);
      }
      expect(heard.length).toBeGreaterThan(0);
      for (const { error } of heard) {
        expect(error).toMatch(/Unauthorized/);
        expect(error).not.toMatch(/203\.0\.113\.99|wrong-token|command was/);
      }
      expect(warnings.codes).toContain('ERR_SLUICE_STORE_DEGRADED');
    });
  });
});

import {
  createHttpHandler,
  createLimiter,
  type Decision,
  type HttpOptions,
  type HttpOutcome,
  MemoryStore,
  type Store,
} from '@sluice/core';
import { manualClock } from '@sluice/core/testing';
import { expectOnlyWarnings } from '../../../../test/support/warnings.js';
import { type FakeRequest, fakeReader } from './support.js';

// Credentials without verify are warned about, incidental here (validation-warnings.test.ts asserts them).
expectOnlyWarnings('ERR_SLUICE_UNVERIFIED_CREDENTIAL');

type Outcome = HttpOutcome<FakeRequest, unknown>;

function setup(options: HttpOptions<FakeRequest>, clock = manualClock()) {
  const store = (options.store as Store | undefined) ?? new MemoryStore({ clock });
  const limiterGiven = options.limiter !== undefined;
  const http = createHttpHandler<FakeRequest>(limiterGiven ? options : { ...options, store }, fakeReader);
  return { http, clock, store };
}

const from = (ip: string, headers?: Record<string, string>): FakeRequest => ({ ip, headers });

/**
 * A MemoryStore that answers through promises, as a remote store does; it records every call. With
 * `replyLater`, a call takes effect at once but its answer comes a macrotask later, as over a network:
 * a write that nobody waits for is then still unanswered when the next request goes out.
 */
function remoteStore(clock: () => number, { replyLater = false } = {}) {
  const memory = new MemoryStore({ clock });
  const subjects: string[] = [];
  const store: Store & { subjects: string[] } = {
    local: false,
    clock,
    subjects,
    consume: async (call) => {
      subjects.push(call.subject);
      const outcome = memory.consume(call);
      if (replyLater) await new Promise((resolve) => setImmediate(resolve));
      return outcome;
    },
    refund: async (call) => memory.refund(call),
    reset: async (limiter, subject) => memory.reset(limiter, subject),
  };
  return store;
}

/** The outcome of a request that must be decided without a promise. */
function sync(o: Outcome | Promise<Outcome>): Outcome {
  expect(o).not.toBeInstanceOf(Promise);
  return o as Outcome;
}

describe('handle: one request in, one answer out', () => {
  test('the memory store path needs no promise: pass, headers, decision', () => {
    const { http } = setup({ limit: 2, window: '1m', algorithm: 'fixed-window' });
    const first = sync(http.handle(from('1.2.3.4')));
    expect(first).toMatchObject({ pass: true, status: 0, body: undefined, delayMs: 0, finish: undefined });
    expect(first.decision).toMatchObject({ allowed: true, remaining: 1 });
    expect(first.headers).toEqual({
      'RateLimit-Policy': '"2-per-1m";q=2;w=60',
      RateLimit: expect.any(String),
    });
    sync(http.handle(from('1.2.3.4')));
    const third = sync(http.handle(from('1.2.3.4')));
    expect(third).toMatchObject({ pass: false, status: 429, decision: { allowed: false } });
    expect(third.headers['Retry-After']).toMatch(/^\d+$/);
    expect(JSON.parse(third.body!)).toMatchObject({ status: 429, policy: '2-per-1m' });
    // Another client has its own count.
    expect(sync(http.handle(from('1.2.3.5'))).pass).toBe(true);
  });

  test('a remote store answers through a promise, with the same answers', async () => {
    const clock = manualClock();
    const { http } = setup({ limit: 1, window: '1m', store: remoteStore(clock) }, clock);
    const first = http.handle(from('1.2.3.4'));
    expect(first).toBeInstanceOf(Promise);
    expect((await first).pass).toBe(true);
    expect((await http.handle(from('1.2.3.4'))).status).toBe(429);
  });

  test('skip: never limited, nothing counted; sync or async', async () => {
    const { http } = setup({ limit: 1, window: '1m', skip: (req) => req.headers?.skip === 'yes' });
    for (let i = 0; i < 3; i++) {
      expect(sync(http.handle(from('1.1.1.1', { skip: 'yes' })))).toMatchObject({
        pass: true,
        decision: undefined,
      });
    }
    expect(sync(http.handle(from('1.1.1.1'))).pass).toBe(true);
    const slow = setup({ limit: 1, window: '1m', skip: async () => true }).http;
    await expect(slow.handle(from('1.1.1.1'))).resolves.toMatchObject({ pass: true, headers: {} });
  });

  test('allowList: the client IP (any spelling), the raw key, a verified subject; or a function', async () => {
    const { http } = setup({
      limit: 1,
      window: '1m',
      subject: ['api-key', 'ip'],
      allowList: ['::ffff:10.0.0.1', 'partner-key'],
    });
    for (let i = 0; i < 3; i++) {
      expect(sync(http.handle(from('10.0.0.1'))).decision).toBeUndefined();
      expect(sync(http.handle(from('9.9.9.9', { 'x-api-key': 'partner-key' }))).decision).toBeUndefined();
    }
    const verified = setup({
      limit: 1,
      window: '1m',
      subject: 'api-key',
      verify: () => 'acme',
      allowList: ['acme'],
    });
    for (let i = 0; i < 3; i++) {
      expect(sync(verified.http.handle(from('9.9.9.9', { 'x-api-key': 'k' }))).pass).toBe(true);
    }
    const seen: Array<string | undefined> = [];
    const fn = setup({
      limit: 1,
      window: '1m',
      allowList: (_req, subject) => {
        seen.push(subject);
        return subject === '2001:db8:0:0:0:0:0:1';
      },
    });
    for (let i = 0; i < 3; i++) expect(sync(fn.http.handle(from('2001:db8::1'))).decision).toBeUndefined();
    expect(seen[0]).toBe('2001:db8:0:0:0:0:0:1');
    const asyncAllow = setup({ limit: 1, window: '1m', allowList: async () => true });
    await expect(asyncAllow.http.handle(from('1.1.1.1'))).resolves.toMatchObject({ pass: true });
  });

  test('denyList: 403, no Retry-After, no RateLimit fields, nothing counted', () => {
    const onDecision = jest.fn();
    const { http } = setup({ limit: 5, window: '1m', denyList: ['6.6.6.6'], onDecision });
    const o = sync(http.handle(from('6.6.6.6')));
    expect(o).toMatchObject({
      pass: false,
      status: 403,
      headers: {},
      decision: { allowed: false, reason: 'deny-list', retryAfterMs: Number.POSITIVE_INFINITY },
      handler: undefined,
    });
    expect(JSON.parse(o.body!)).toEqual({
      status: 403,
      title: 'Forbidden',
      detail: 'This client is not allowed.',
      policy: 'deny-list',
    });
    expect(onDecision).not.toHaveBeenCalled();
    expect(sync(http.handle(from('6.6.6.7'))).decision?.remaining).toBe(4);
  });

  test('cost: a number, a function, an async function', async () => {
    const byNumber = setup({ limit: 10, window: '1m', cost: 4 }).http;
    expect(sync(byNumber.handle(from('1.1.1.1'))).decision?.remaining).toBe(6);
    const byFn = setup({ limit: 10, window: '1m', cost: (req) => Number(req.headers?.units ?? 1) }).http;
    expect(sync(byFn.handle(from('1.1.1.1', { units: '7' }))).decision?.remaining).toBe(3);
    const byAsync = setup({ limit: 10, window: '1m', cost: async () => 2 }).http;
    expect((await byAsync.handle(from('1.1.1.1'))).decision?.remaining).toBe(8);
  });

  test('errors of user callbacks come back as a rejected promise, never thrown', async () => {
    const boom = () => {
      throw new Error('boom');
    };
    const cases: HttpOptions<FakeRequest>[] = [
      { limit: 1, window: '1m', skip: boom },
      { limit: 1, window: '1m', subject: boom },
      { limit: 1, window: '1m', subject: 'api-key', verify: boom },
      { limit: 1, window: '1m', cost: boom },
      { limit: 1, window: '1m', cost: () => 0 },
      { limit: 1, window: '1m', cost: () => Number.NaN },
      { limit: 1, window: '1m', allowList: boom },
      { limit: 1, window: '1m', denyList: boom },
      { limit: 1, window: '1m', skip: async () => Promise.reject(new Error('boom')) },
      { limit: 1, window: '1m', subject: 'api-key', verify: async () => Promise.reject(new Error('boom')) },
    ];
    for (const options of cases) {
      const { http } = setup(options);
      let outcome: unknown;
      expect(() => {
        outcome = http.handle(from('1.1.1.1', { 'x-api-key': 'k' }));
      }).not.toThrow();
      await expect(outcome).rejects.toThrow(/boom|cost/);
    }
  });

  test('onDecision sees every decision and never a raw credential', () => {
    const decisions: Decision[] = [];
    const { http } = setup({
      limit: 1,
      window: '1m',
      subject: 'api-key',
      onDecision: (_req, d) => decisions.push(d),
    });
    http.handle(from('1.1.1.1', { 'x-api-key': 'sk_live_SECRET' }));
    http.handle(from('1.1.1.1', { 'x-api-key': 'sk_live_SECRET' }));
    expect(decisions.map((d) => d.allowed)).toEqual([true, false]);
    expect(JSON.stringify(decisions)).not.toContain('SECRET');
  });

  test('the raw credential never reaches the store; only kind-prefixed digests do', async () => {
    const clock = manualClock();
    const store = remoteStore(clock);
    const { http } = setup({ limit: 5, window: '1m', subject: ['api-key', 'token'], store }, clock);
    await http.handle(from('1.1.1.1', { 'x-api-key': 'sk_live_SECRET' }));
    await http.handle(from('1.1.1.1', { authorization: 'Bearer tok_SECRET' }));
    expect(store.subjects).toHaveLength(2);
    for (const s of store.subjects) expect(s).not.toContain('SECRET');
    expect(store.subjects[0]!.startsWith('key:')).toBe(true);
    expect(store.subjects[1]!.startsWith('token:')).toBe(true);
  });

  test('an onDecision that throws surfaces its error and gives the lease back', async () => {
    const limiter = createLimiter({ limit: 1, window: '1m', algorithm: 'concurrency' });
    let throwing = true;
    const { http } = setup({
      limiter,
      onDecision: () => {
        if (throwing) throw new Error('log down');
      },
    });
    await expect(http.handle(from('1.1.1.1'))).rejects.toThrow('log down');
    throwing = false;
    // The lease of the failed request was released: the next one fits.
    expect(sync(http.handle(from('1.1.1.1'))).pass).toBe(true);
  });

  test('shadow: decides, reports and sets headers, never blocks', () => {
    const decisions: boolean[] = [];
    const { http } = setup(
      {
        limit: 1,
        window: '1m',
        algorithm: 'fixed-window',
        shadow: true,
        denyList: ['6.6.6.6'],
        onDecision: (_r, d) => decisions.push(d.allowed),
      },
      manualClock(1_699_920_000_000),
    );
    http.handle(from('1.1.1.1'));
    const o = sync(http.handle(from('1.1.1.1')));
    expect(o).toMatchObject({ pass: true, status: 0, decision: { allowed: false } });
    expect(o.headers).toEqual({
      'RateLimit-Policy': '"1-per-1m";q=1;w=60',
      RateLimit: '"1-per-1m";r=0;t=60',
    });
    expect(decisions).toEqual([true, false]);
    expect(sync(http.handle(from('6.6.6.6'))).pass).toBe(true);
  });

  test('statusCode and handler: the handler is given for 429 answers', () => {
    const handler = jest.fn();
    const { http } = setup({ limit: 1, window: '1m', statusCode: 420, handler });
    http.handle(from('1.1.1.1'));
    const o = sync(http.handle(from('1.1.1.1')));
    expect(o.status).toBe(420);
    expect(o.handler).toBe(handler);
    expect(JSON.parse(o.body!).status).toBe(420);
  });

  test('leaky bucket with delay: delayMs to hold, one slot apart', () => {
    const { http } = setup({ limit: 4, window: '1s', algorithm: 'leaky-bucket', burst: 3 });
    expect([0, 1, 2].map(() => sync(http.handle(from('1.1.1.1'))).delayMs)).toEqual([0, 250, 500]);
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(429);
    const noDelay = setup({ limit: 4, window: '1s', algorithm: 'leaky-bucket', burst: 3, delay: false }).http;
    expect([0, 1, 2].map(() => sync(noDelay.handle(from('1.1.1.1'))).delayMs)).toEqual([0, 0, 0]);
  });

  test('concurrency: finish releases the lease exactly once', async () => {
    const { http } = setup({ limit: 1, window: '1m', algorithm: 'concurrency' });
    const held = sync(http.handle(from('1.1.1.1')));
    expect(held.finish).toBeInstanceOf(Function);
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(429);
    held.finish!(200);
    held.finish!(200);
    held.finish!(0);
    const next = sync(http.handle(from('1.1.1.1')));
    expect(next.pass).toBe(true);
    // The repeated finish calls did not release the second lease.
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(429);
    next.finish!(0);
    expect(sync(http.handle(from('1.1.1.1'))).pass).toBe(true);
  });

  test('skipFailedRequests: a status >= 400 gives the charge back; a client gone first (0) does not', () => {
    const { http } = setup({ limit: 3, window: '1m', algorithm: 'fixed-window', skipFailedRequests: true });
    sync(http.handle(from('1.1.1.1'))).finish!(500);
    sync(http.handle(from('1.1.1.1'))).finish!(404);
    sync(http.handle(from('1.1.1.1'))).finish!(0);
    const ok = sync(http.handle(from('1.1.1.1')));
    expect(ok.decision?.remaining).toBe(1);
    ok.finish!(200);
    expect(sync(http.handle(from('1.1.1.1'))).decision?.remaining).toBe(0);
  });

  test('skipSuccessfulRequests: a status < 400 gives the charge back', () => {
    const { http } = setup({
      limit: 2,
      window: '1m',
      algorithm: 'fixed-window',
      skipSuccessfulRequests: true,
    });
    for (let i = 0; i < 5; i++) sync(http.handle(from('1.1.1.1'))).finish!(204);
    sync(http.handle(from('1.1.1.1'))).finish!(401);
    expect(sync(http.handle(from('1.1.1.1'))).decision?.remaining).toBe(0);
  });

  test('without leases or refunds there is no finish (no listeners on the fast path)', () => {
    const { http } = setup({ limit: 2, window: '1m' });
    expect(sync(http.handle(from('1.1.1.1'))).finish).toBeUndefined();
  });

  test('subjectOf resolves as handle does', async () => {
    const { http } = setup({ limit: 2, window: '1m', subject: ['api-key', 'ip'] });
    expect(http.subjectOf(from('::ffff:1.2.3.4'))).toBe('ip:1.2.3.4');
    expect(http.subjectOf(from('1.2.3.4', { 'x-api-key': 'k' }))).toMatch(/^key:[\w-]{43}$/);
  });
});

describe('ban', () => {
  const options = {
    limit: 1,
    window: '1m',
    algorithm: 'fixed-window',
    ban: { after: 2, for: '10m' },
  } as const;

  test('denied `after` times within `within`: 403 with Retry-After until the ban ends', () => {
    const clock = manualClock(1_700_000_040_000);
    const { http } = setup(options, clock);
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(0);
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(429);
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(429);
    const banned = sync(http.handle(from('1.1.1.1')));
    expect(banned).toMatchObject({ pass: false, status: 403, headers: { 'Retry-After': '600' } });
    expect(JSON.parse(banned.body!)).toMatchObject({ status: 403, policy: 'ban', retryAfter: 600 });
    expect(banned.decision).toMatchObject({ allowed: false, policy: 'ban', retryAfterMs: 600_000 });
    // Another subject is not banned.
    expect(sync(http.handle(from('2.2.2.2'))).pass).toBe(true);
    // Still banned after the policy window is over, until the ban ends to the ms.
    clock.advance(600_000 - 1);
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(403);
    expect(sync(http.handle(from('1.1.1.1'))).headers['Retry-After']).toBe('1');
    clock.advance(1);
    expect(sync(http.handle(from('1.1.1.1'))).pass).toBe(true);
    // The strikes started over: one denial is not yet a ban.
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(429);
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(429);
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(403);
  });

  test('strikes older than `within` do not count', () => {
    const clock = manualClock(1_700_000_040_000);
    const { http } = setup({ ...options, ban: { after: 2, within: '1m', for: '10m' } }, clock);
    http.handle(from('1.1.1.1'));
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(429);
    clock.advance(60_000);
    http.handle(from('1.1.1.1'));
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(429);
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(429);
  });

  test('kept in the store: two handlers on one store (two processes) see one ban', () => {
    const clock = manualClock(1_700_000_040_000);
    const store = new MemoryStore({ clock });
    // One name, as two processes of one app share their limits on purpose (ERR_SLUICE_NAME_REUSE).
    const a = setup({ ...options, store, name: 'app' }, clock).http;
    const b = setup({ ...options, store, name: 'app' }, clock).http;
    a.handle(from('1.1.1.1'));
    expect(sync(b.handle(from('1.1.1.1'))).status).toBe(429);
    expect(sync(a.handle(from('1.1.1.1'))).status).toBe(429);
    expect(sync(b.handle(from('1.1.1.1'))).status).toBe(403);
  });

  test('on a remote store: the check goes out with the decision; a banned request is charged nothing', async () => {
    const clock = manualClock(1_700_000_040_000);
    const store = remoteStore(clock, { replyLater: true });
    const { http } = setup({ ...options, limit: 2, store }, clock);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await http.handle(from('1.1.1.1'))).status);
    // The ban started by the 2nd denial holds for the very next request: its strike was in the
    // store before that denial was answered.
    expect(statuses).toEqual([0, 0, 429, 429, 403]);
    clock.advance(600_000);
    // Nothing was charged while banned, and the fixed window moved on: the full quota is back.
    expect((await http.handle(from('1.1.1.1'))).decision?.remaining).toBe(1);
  });

  test('within defaults to the longest policy window', () => {
    const clock = manualClock(1_700_000_000_000);
    const { http } = setup(
      {
        policies: [
          { limit: 1, window: '1s', algorithm: 'fixed-window' },
          { limit: 100, window: '1h', algorithm: 'fixed-window' },
        ],
        ban: { after: 2, for: '1d' },
      },
      clock,
    );
    http.handle(from('1.1.1.1'));
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(429);
    clock.advance(30 * 60_000);
    http.handle(from('1.1.1.1'));
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(429);
    expect(sync(http.handle(from('1.1.1.1'))).status).toBe(403);
  });
});

// Hostile review D5: X-RateLimit-Reset was ceil((Date.now() + resetMs) / 1000) when the header was
// written, a moment after the store decided (the memory store's shared reading of Date.now lags it by
// up to a millisecond or more; a stacked limiter rewrites an earlier decision later still). For a
// window that ends on a whole second, any such moment read one second past the true reset.
describe('legacy X-RateLimit-Reset: the true reset, on the clock the store decided by', () => {
  const fixed = { limit: 2, window: '10s', algorithm: 'fixed-window', legacyHeaders: true } as const;

  /** Date.now reads `lagMs` past the manual clock, as it does once the store has decided. */
  function lagging(clock: () => number, lagMs = 1) {
    return jest.spyOn(Date, 'now').mockImplementation(() => clock() + lagMs);
  }

  test('an aligned fixed window: the second it ends, allowed and denied', () => {
    const clock = manualClock(1_700_000_003_250);
    const { http } = setup({ ...fixed, headers: false }, clock);
    const spy = lagging(clock);
    try {
      expect(sync(http.handle(from('1.2.3.4'))).headers['X-RateLimit-Reset']).toBe('1700000010');
      clock.set(1_700_000_009_999);
      expect(sync(http.handle(from('1.2.3.4'))).headers['X-RateLimit-Reset']).toBe('1700000010');
      const denied = sync(http.handle(from('1.2.3.4')));
      expect(denied.status).toBe(429);
      expect(denied.headers['X-RateLimit-Reset']).toBe('1700000010');
    } finally {
      spy.mockRestore();
    }
  });

  test('a remote store: the time it was asked, not the time it answered', async () => {
    const clock = manualClock(1_700_000_009_999);
    const memory = new MemoryStore({ clock });
    // Answers 20 ms after it decided, and has no clock of its own to read (as Redis has none here).
    const remote: Store = {
      local: false,
      consume: async (call) => {
        const outcome = memory.consume(call);
        clock.advance(20);
        return outcome;
      },
      refund: async (call) => memory.refund(call),
      reset: async (limiter, subject) => memory.reset(limiter, subject),
    };
    const spy = jest.spyOn(Date, 'now').mockImplementation(() => clock());
    try {
      const { http } = setup({ ...fixed, store: remote }, clock);
      expect((await http.handle(from('1.2.3.4'))).headers['X-RateLimit-Reset']).toBe('1700000010');
    } finally {
      spy.mockRestore();
    }
  });

  test('stacked limiters: an earlier binding decision keeps its own reset', () => {
    type Req = FakeRequest & { rateLimit?: Decision };
    const reader = { ...fakeReader, previous: (req: Req) => req.rateLimit };
    const clock = manualClock(1_700_000_009_999);
    const store = new MemoryStore({ clock });
    const appWide = createHttpHandler<Req>({ ...fixed, store, name: 'app' }, reader);
    const route = createHttpHandler<Req>(
      { limit: 100, window: '1m', store, name: 'route', legacyHeaders: true },
      reader,
    );
    const spy = lagging(clock);
    try {
      const req: Req = from('1.2.3.4');
      req.rateLimit = sync(appWide.handle(req) as Outcome).decision;
      clock.advance(5); // the time between the two limiters
      const merged = sync(route.handle(req) as Outcome).headers;
      // The app-wide limit binds (1 left of 2, against 99 of 100): its window ends at ...010.
      expect(merged['X-RateLimit-Remaining']).toBe('1');
      expect(merged['X-RateLimit-Reset']).toBe('1700000010');
    } finally {
      spy.mockRestore();
    }
  });
});

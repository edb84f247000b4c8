import type { StoreParityReport } from '@sluice/core/testing';
import { runScenario } from './run-scenario.js';

/**
 * ClusterStore with real worker processes forked by node:cluster (no mocked IPC): each scenario runs
 * a primary and its workers in processes of their own (child/), which report what they saw.
 */
jest.setTimeout(90_000);

interface SharedLimit {
  parity: StoreParityReport | { error: string };
  atomicity: Array<{ label: string; allowed: number; error?: string }>;
  lookalike: { allowed: boolean; remaining: number; degraded: boolean };
  echo: Array<[boolean, number, boolean]>;
  chatter: number;
  primarySeen: { app: number; sluice: number };
  workerSeen: Array<{ app: number; sluice: number }>;
}

describe('four workers on one primary', () => {
  let run: SharedLimit;
  let stderr: string;
  beforeAll(async () => {
    ({ result: run, stderr } = await runScenario<SharedLimit>('shared-limit'));
  });

  it('decides every call exactly as MemoryStore, on the primary clock (conformance kit parity)', () => {
    expect(run.parity).toMatchObject({ policySets: 11, traces: 33 });
    const parity = run.parity as StoreParityReport;
    expect(parity.denials).toBeGreaterThan(100);
    expect(parity.refunds).toBeGreaterThan(10);
  });

  it('keeps one limit exactly across the workers, for every algorithm', () => {
    const singles = run.atomicity.slice(0, 7);
    expect(singles.map((c) => c.label)).toEqual([
      'fixed-window',
      'sliding-window',
      'sliding-log',
      'token-bucket',
      'leaky-bucket',
      'gcra',
      'concurrency',
    ]);
    // 4 workers x 200 concurrent calls at a limit of 400: exactly 400 allowed, nothing degraded.
    for (const c of singles) expect(c).toEqual({ label: c.label, allowed: 400 });
  });

  it('charges two policies all-or-nothing across the workers', () => {
    const pairs = run.atomicity.slice(7);
    expect(pairs).toEqual([
      { label: 'fixed-window + sliding-window', allowed: 400 },
      { label: 'sliding-log + token-bucket', allowed: 400 },
      { label: 'global gcra + concurrency', allowed: 400 },
    ]);
  });

  it("shares the IPC channel with the app's own messages", () => {
    // Every app message arrived, interleaved with Sluice's, and the app listeners told them apart.
    expect(run.chatter).toBe(4 * 20 * 10);
    expect(run.primarySeen.sluice).toBeGreaterThan(10_000);
    for (const seen of run.workerSeen) expect(seen.sluice).toBeGreaterThanOrEqual(2000);
    // Messages shaped like Sluice's but not tagged as its own charged nothing: the real call took the only unit.
    expect(run.lookalike).toEqual({ allowed: true, remaining: 0, degraded: false });
    // Its own requests relayed back to a worker are not taken for the primary's answers (each was
    // before: a degraded decision; hostile review).
    expect(run.echo).toEqual([
      [true, 4, false],
      [true, 3, false],
      [true, 2, false],
    ]);
    expect(stderr).toBe('');
  });
});

interface WorkerFaults {
  exit: { code: number | null; signal: string | null };
  limitersAfterExit: number;
  survivorSaw: { allowed: boolean; remaining: number; degraded: boolean };
  restartedSaw: { allowed: boolean; remaining: number; degraded: boolean };
  limiters: number;
  workers: number;
  errors: number;
}

describe('a worker killed mid-call, and its restart', () => {
  it('leaves the primary answering, and the new worker on the same counter', async () => {
    const { result, stderr } = await runScenario<WorkerFaults>('worker-faults');
    expect(result.exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(result.errors).toBe(0);
    // The dead worker's limiters were forgotten with it.
    expect(result.limitersAfterExit).toBe(0);
    // It charged some of its 3000 calls before it died (at most the limit of 1000).
    expect(result.survivorSaw.allowed).toBe(true);
    expect(result.survivorSaw.degraded).toBe(false);
    expect(result.survivorSaw.remaining).toBeLessThan(999);
    expect(result.survivorSaw.remaining).toBeGreaterThanOrEqual(0);
    expect(result.restartedSaw).toEqual({
      allowed: result.survivorSaw.remaining > 0,
      remaining: Math.max(0, result.survivorSaw.remaining - 1),
      degraded: false,
    });
    expect(result.limiters).toBe(2);
    expect(result.workers).toBe(2);
    expect(stderr).toBe('');
  });
});

interface SilentPrimary {
  modes: Record<
    'local' | 'allow' | 'deny',
    { allowed: boolean; degraded: boolean; reason: string | null; ms: number; resetMs: number }
  >;
  circuit: { ms: number; degraded: boolean; pendingBefore: number; pendingAfterSixth: number };
  pendingAtEnd: number;
  storeErrors: Array<{ store: string; timeout: boolean; limiter: string }>;
}

describe('a primary that does not answer', () => {
  let run: SilentPrimary;
  let stderr: string;
  beforeAll(async () => {
    ({ result: run, stderr } = await runScenario<SilentPrimary>('silent-primary'));
  });

  it.each([
    ['local', true, null],
    ['allow', true, null],
    ['deny', false, 'store-error'],
  ] as const)('onStoreError %s decides within storeTimeout (100 ms)', (mode, allowed, reason) => {
    const seen = run.modes[mode];
    expect(seen).toMatchObject({ allowed, degraded: true, reason });
    expect(seen.ms).toBeGreaterThanOrEqual(95);
    expect(seen.ms).toBeLessThan(300);
    // reset never rejects, and gives up at storeTimeout too.
    expect(seen.resetMs).toBeLessThan(300);
  });

  it("reports store errors as 'cluster' timeouts, and warns once per limiter", () => {
    expect(run.storeErrors.slice(0, 3)).toEqual([
      { store: 'cluster', timeout: true, limiter: 'local' },
      { store: 'cluster', timeout: true, limiter: 'allow' },
      { store: 'cluster', timeout: true, limiter: 'deny' },
    ]);
    expect(stderr.match(/ERR_SLUICE_STORE_DEGRADED/g)).toHaveLength(4);
  });

  it('opens the circuit after five failures: the next call costs no wait and no pending call', () => {
    expect(run.storeErrors.filter((e) => e.limiter === 'circuit')).toHaveLength(5);
    expect(run.circuit.degraded).toBe(true);
    expect(run.circuit.ms).toBeLessThan(50);
    expect(run.circuit.pendingAfterSixth).toBeLessThanOrEqual(run.circuit.pendingBefore);
  });

  it("forgets calls nobody answered after the store's timeout: nothing leaks", () => {
    expect(run.pendingAtEnd).toBe(0);
  });
});

interface BusyPrimary {
  decisions: Array<{ allowed: boolean; degraded: boolean }>;
  after: { remaining: { givenUp: number; awaited: number }; pending: number };
  together: number;
}

describe('a primary blocked for 1.5 s with calls waiting in the pipe', () => {
  it('leaves nothing charged: calls given up are not run, late answers are given back', async () => {
    const { result } = await runScenario<BusyPrimary>('busy-primary');
    // onStoreError 'local' decided all ten within storeTimeout.
    expect(result.decisions).toEqual(Array(10).fill({ allowed: true, degraded: true }));
    expect(result.after).toEqual({ remaining: { givenUp: 10, awaited: 10 }, pending: 0 });
    // The ten calls travelled as one message: each was still given up or given back on its own.
    expect(result.together).toBe(10);
  });
});

interface Batching {
  first: Array<[boolean, number]>;
  one: BatchedBurst;
  two: BatchedBurst;
  wide: number;
  taggedInside: number;
}

interface BatchedBurst {
  decisions: Array<[boolean, number]>;
  degraded: boolean;
  received: { messages: number; answers: number; taggedInside: number };
  sent: { messages: number; calls: number };
}

describe("a worker's calls of one turn", () => {
  let run: Batching;
  let stderr: string;
  beforeAll(async () => {
    ({ result: run, stderr } = await runScenario<Batching>('batching'));
  });

  it('travel as one IPC message each way, counted on a real channel', () => {
    expect(run.first).toEqual([
      [true, 99],
      [true, 9],
    ]);
    for (const burst of [run.one, run.two]) {
      expect(burst.sent).toEqual({ messages: 1, calls: 64 });
      // Only the message is tagged, not each call or answer in it.
      expect(burst.received).toEqual({ messages: 1, answers: 64, taggedInside: 0 });
      expect(burst.degraded).toBe(false);
    }
    expect(run.taggedInside).toBe(0);
    expect(stderr).toBe('');
  });

  it('are decided in the order they were made, as they would be one by one', () => {
    expect(run.one.decisions).toEqual(Array.from({ length: 64 }, (_, i) => [true, 98 - i]));
  });

  it('keep several policies all-or-nothing inside one message', () => {
    // The narrow policy (10) had one unit taken by the first call: 9 more are allowed, then none.
    const expected = Array.from({ length: 64 }, (_, i) => (i < 9 ? [true, 8 - i] : [false, 0]));
    expect(run.two.decisions).toEqual(expected);
    // The wide policy (1000) was charged for the 10 allowed calls only.
    expect(run.wide).toBe(990);
  });
});

interface OlderPrimary {
  bursts: Array<Array<[boolean, number, boolean]>>;
  received: { calls: number; ignored: number };
}

describe('new workers beside a primary of the release before batching (a rolling restart)', () => {
  it('send each call alone, and every call is decided by the primary', async () => {
    const { result, stderr } = await runScenario<OlderPrimary>('older-primary');
    // That primary reads a lone call only: a `Calls` would be ignored and every call in it degraded.
    expect(result.received).toEqual({ calls: 128, ignored: 0 });
    const expected = Array.from({ length: 128 }, (_, i) => [true, 999 - i, false]);
    expect(result.bursts.flat()).toEqual(expected);
    expect(stderr).toBe('');
  });
});

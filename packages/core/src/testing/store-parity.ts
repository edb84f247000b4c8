import { createLimiter } from '../limiter.js';
import type { Store, StoreOutcome } from '../stores/store.js';
import {
  multiPolicySets,
  type PolicySet,
  singlePolicySets,
  type TraceSetOptions,
  tracesFor,
} from './policy-sets.js';
import { type RecordedCall, RecordingStore, reported } from './recording-store.js';
import { runTrace, type TraceResult, type TraceStep } from './trace.js';

/**
 * A trace's resets `elsewhere` build a second limiter on the store under test, sharing its counters on
 * purpose: named, so ERR_SLUICE_NAME_REUSE (limiters sharing one without a name) keeps quiet.
 */
const PARITY_NAME = 'parity';

/**
 * Builds the store under test. It must decide by `clock` (ms since the epoch) wherever it reads the
 * time: the checks move it like a manual clock, forwards and, between traces, back. A store whose
 * clock is elsewhere (another process, a database) must set that clock to `clock()` before each call.
 * Called once per check; every trace uses a key prefix of its own, so one store, even one shared with
 * earlier runs, serves them all.
 */
export type StoreFactory = (clock: () => number) => Store | Promise<Store>;

export interface StoreParityOptions extends TraceSetOptions {
  /** Default: every algorithm alone and four multi-policy sets (singlePolicySets, multiPolicySets). */
  policySets?: readonly PolicySet[];
  /** Key prefix; each trace uses its own below it. Default `parity-` and a random part. */
  prefix?: string;
  /** Longest wait for one store call before it counts as a failure; default 10 s. */
  timeoutMs?: number;
}

/** What a parity check went through. Plain data. */
export interface StoreParityReport {
  readonly policySets: number;
  readonly traces: number;
  /** Store calls replayed one by one and compared with MemoryStore's answers. */
  readonly storeCalls: number;
  /** Limiter decisions compared with MemoryStore's. */
  readonly decisions: number;
  /** Denied decisions among them: a check where nothing is denied proves little. */
  readonly denials: number;
  /** Refunds and releases replayed. */
  readonly refunds: number;
}

/**
 * Proves that a store answers exactly as MemoryStore on a manual clock, for every algorithm alone and
 * for several policies decided together, over random traces of consumes, peeks, refunds, releases
 * and resets. Two checks per trace:
 *
 * 1. the store calls a limiter made of a MemoryStore are replayed on the store at the same clock
 *    readings: each answer (its clock, and every policy's allowed, remaining, resetMs, retryAfterMs and
 *    delayMs) must be MemoryStore's;
 * 2. the trace runs again through a limiter on the store itself (deny cache off: it is Sluice's, not
 *    the store's): every decision must be the one the limiter took on MemoryStore.
 *
 * Resolves with a report; rejects with an Error naming the first difference. Framework-free: call it
 * inside a Jest, Vitest or node:test test.
 */
export async function checkStoreParity(
  makeStore: StoreFactory,
  options: StoreParityOptions = {},
): Promise<StoreParityReport> {
  const {
    policySets = [...singlePolicySets, ...multiPolicySets],
    prefix = `parity-${Math.random().toString(36).slice(2, 10)}`,
    timeoutMs = 10_000,
  } = options;
  let time: () => number = () => 0;
  const store = await makeStore(() => time());
  const report = {
    policySets: policySets.length,
    traces: 0,
    storeCalls: 0,
    decisions: 0,
    denials: 0,
    refunds: 0,
  };
  for (const [setIndex, { label, policies }] of policySets.entries()) {
    const traces = tracesFor(policies, options);
    for (const [traceIndex, trace] of traces.entries()) {
      const where = `${label}, trace ${traceIndex + 1} of ${traces.length}`;
      const base = `${prefix}-${setIndex}-${traceIndex}`;
      let recorder: RecordingStore | undefined;
      const expected = await runTrace((clock) => {
        recorder = new RecordingStore(clock);
        return createLimiter({
          name: PARITY_NAME,
          policies: [...policies],
          prefix: `${base}-m`,
          store: recorder,
        });
      }, trace);
      // 1. The very same store calls, at the same clock readings.
      for (const [index, entry] of recorder!.log.entries()) {
        time = () => entry.now;
        await replay(store, entry, index, where, timeoutMs);
      }
      // 2. The same trace through a limiter on the store under test.
      const actual = await runTrace((clock) => {
        time = clock;
        return createLimiter({
          name: PARITY_NAME,
          policies: [...policies],
          prefix: `${base}-s`,
          store,
          denyCacheMs: 0,
          storeTimeout: timeoutMs,
          onStoreError: 'deny',
        });
      }, trace);
      compareDecisions(expected, actual, trace, where);
      report.traces++;
      report.storeCalls += recorder!.log.length;
      report.decisions += expected.filter((r) => r !== null).length;
      report.denials += expected.filter((r) => r !== null && !r.allowed).length;
      report.refunds += recorder!.log.filter((e) => e.op === 'refund').length;
    }
  }
  return report;
}

async function replay(
  store: Store,
  entry: RecordedCall,
  index: number,
  where: string,
  timeoutMs: number,
): Promise<void> {
  const what = describeCall(entry, index);
  let answer: StoreOutcome | undefined;
  try {
    if (entry.op === 'refund') await within(store.refund(entry.call), timeoutMs);
    else if (entry.op === 'reset') await within(store.reset(entry.limiter, entry.subject), timeoutMs);
    else answer = reported(await within(store.consume(entry.call), timeoutMs));
  } catch (error) {
    throw new Error(`${where}: ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (entry.op !== 'consume') return;
  const expected = JSON.stringify(entry.outcome);
  const actual = JSON.stringify(answer);
  if (actual !== expected) {
    throw new Error(`${where}: ${what} answered\n  ${actual}\nwhere MemoryStore answered\n  ${expected}`);
  }
}

function describeCall(entry: RecordedCall, index: number): string {
  const at = `at ${entry.now}`;
  if (entry.op === 'reset') return `store call ${index} (reset of "${entry.subject}" ${at})`;
  if (entry.op === 'refund') {
    const { subject, charge } = entry.call;
    return `store call ${index} (refund of cost ${charge.cost} charged at ${charge.chargedAt} to "${subject}" ${at})`;
  }
  const { mode, cost, subject } = entry.call;
  return `store call ${index} (${mode} of cost ${cost} by "${subject}" ${at})`;
}

function compareDecisions(
  expected: readonly TraceResult[],
  actual: readonly TraceResult[],
  trace: readonly TraceStep[],
  where: string,
): void {
  for (let i = 0; i < expected.length; i++) {
    const got = actual[i];
    if (got?.degraded) {
      throw new Error(
        `${where}: step ${i} (${JSON.stringify(trace[i])}): the store failed or did not answer in time`,
      );
    }
    const want = JSON.stringify(expected[i]);
    if (JSON.stringify(got) !== want) {
      throw new Error(
        `${where}: step ${i} (${JSON.stringify(trace[i])}) decided\n  ${JSON.stringify(got)}\nwhere MemoryStore decided\n  ${want}`,
      );
    }
  }
}

/** Settles as `value` does, or rejects after `ms`: a store that hangs fails the check instead of the test's timeout. */
export function within<T>(value: T | Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([Promise.resolve(value), late]).finally(() => clearTimeout(timer));
}

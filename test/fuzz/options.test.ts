import {
  createLimiter,
  ErrorCodes,
  type Limiter,
  type LimiterOptions,
  MemoryStore,
  SluiceConfigError,
} from '@sluice/core';
import fc from '../support/fast-check.js';
import { allowWarnings } from '../support/warnings.js';
import { anyLimiterOptions, anyMemoryStoreOptions, validLimiterOptions } from './arbitraries.js';

// Traces draw windows of a few milliseconds as bare numbers, on purpose.
allowWarnings('ERR_SLUICE_WINDOW_IN_SECONDS');

const CODES = new Set<string>(Object.values(ErrorCodes));
const RUNS = 3000;

/** The only way a bad option may fail: a SluiceConfigError with a known code, naming its option first. */
function expectConfigError(error: unknown): void {
  if (!(error instanceof SluiceConfigError)) throw error;
  expect(CODES.has(error.code)).toBe(true);
  expect(error.message.startsWith(`${error.option}: `)).toBe(true);
}

/** A limiter that was accepted must work: every call settles with a coherent decision. */
async function expectWorking(limiter: Limiter): Promise<void> {
  const decision = await limiter.consume('subject', { cost: 1 });
  expect(typeof decision.allowed).toBe('boolean');
  expect(decision.policies).toHaveLength(limiter.policies.length);
  await limiter.peek('subject');
  await limiter.reset('subject');
}

describe('fuzzed options', () => {
  it('createLimiter either works or throws SluiceConfigError, nothing else', async () => {
    const seen = { accepted: 0, rejected: 0 };
    await fc.assert(
      fc.asyncProperty(anyLimiterOptions, async (options) => {
        // One limiter a draw: a second on the same options would share a drawn store under one name,
        // which ERR_SLUICE_NAME_REUSE rightly warns of.
        let limiter: Limiter;
        try {
          limiter = createLimiter(options as LimiterOptions);
        } catch (error) {
          expectConfigError(error);
          seen.rejected++;
          return;
        }
        seen.accepted++;
        await expectWorking(limiter);
      }),
      // A store drawn without a name: the draw that failed CI on d7122c5, one run in a few.
      { numRuns: RUNS, examples: [[{ limit: 5, window: '1s', store: new MemoryStore() }]] },
    );
    // Both paths were exercised, or the generator is not doing its job.
    expect(seen.accepted).toBeGreaterThan(RUNS / 20);
    expect(seen.rejected).toBeGreaterThan(RUNS / 4);
  });

  it('accepts every option set the contract allows', async () => {
    await fc.assert(
      fc.asyncProperty(validLimiterOptions, (options) => expectWorking(createLimiter(options))),
      { numRuns: RUNS / 3 },
    );
  });

  it('new MemoryStore either works or throws SluiceConfigError, nothing else', async () => {
    await fc.assert(
      fc.asyncProperty(anyMemoryStoreOptions, async (options) => {
        let store: MemoryStore;
        try {
          store = new MemoryStore(options as never);
        } catch (error) {
          expectConfigError(error);
          return;
        }
        await expectWorking(createLimiter({ limit: 2, window: '1s', store }));
      }),
      { numRuns: RUNS / 3 },
    );
  });
});

import { SUBJECTS } from './child/primary-limiter.js';
import { runScenario } from './run-scenario.js';

type Result = Record<string, { primaryAllowsAfterWorkerSpentAll: boolean; workerAllowedAfterReset: boolean }>;

// Real processes: a limiter in the primary on ClusterStore.primary().store, one in a worker on
// ClusterStore, both named 'api'. The in-process twin is in memory/one-store-writers.test.ts.
describe('node:cluster: a limiter in the primary and one in a worker, one name', () => {
  let run: Result;
  beforeAll(async () => {
    ({ result: run } = await runScenario<Result>('primary-limiter'));
  }, 90_000);

  it.each(SUBJECTS.map((s) => [s.length > 20 ? `${s.slice(0, 20)}... (${s.length} chars)` : s, s]))(
    '%s: the primary sees what the worker spent, and its reset frees the worker',
    (_, subject) => {
      expect(run[subject]).toEqual({
        primaryAllowsAfterWorkerSpentAll: false,
        workerAllowedAfterReset: true,
      });
    },
  );
});

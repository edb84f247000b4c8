import type { Decision, Store } from '@sluice/core';
import type { SharedOptions } from '../adapters/frameworks.js';
import { eachFramework } from '../adapters/frameworks.js';
import { failingStore, serving, statuses } from '../adapters/support.js';
import { expectOnlyWarnings } from '../support/warnings.js';

// A failing store is one of the refusals: its warning is expected, captured.
expectOnlyWarnings('ERR_SLUICE_STORE_DEGRADED');

// A custom `handler` answered only 429s: 403 (ban, deny list) and 503 (store failed) went around it.
// API.md r2: it answers every refusal, `decision.reason` says which. Failed on 13f5928.

describe.each(eachFramework)('%s: the handler answers every refusal', (_name, framework) => {
  const start = serving(framework);

  async function run(options: SharedOptions, times: number): Promise<[number[], Decision['reason'][]]> {
    const reasons: Decision['reason'][] = [];
    const handler = framework.answer((decision) => {
      reasons.push(decision.reason);
      return { custom: true };
    });
    return [await statuses(await start({ ...options, handler }), times, '/ok'), reasons];
  }

  it('429, then 403 for the ban', async () => {
    expect(await run({ limit: 1, window: '1m', ban: { after: 1, for: '1h' } }, 3)).toEqual([
      [200, 429, 403],
      ['limit', 'ban'],
    ]);
  });

  it('403 for the deny list', async () => {
    expect(await run({ limit: 5, window: '1m', denyList: ['127.0.0.1'] }, 1)).toEqual([[403], ['deny-list']]);
  });

  it('503 when the store failed and onStoreError is deny', async () => {
    const store: Store = failingStore();
    expect(await run({ limit: 5, window: '1m', store, onStoreError: 'deny' }, 1)).toEqual([
      [503],
      ['store-error'],
    ]);
  });
});

import { MemoryStore } from '@sluice/core';
import { ask, listenExpress, startEach, statuses } from '../shared/listen.js';
import { createApp } from './app.js';

describe('examples/shaping', () => {
  // A still clock: the seven requests are decided as one burst however slowly a loaded machine
  // delivers them (on the wall clock the bucket drained a slot between two, and 6 went through).
  const app = startEach(() =>
    listenExpress(createApp({ store: new MemoryStore({ clock: () => 1_700_000_000_000 }) })),
  );

  it('lets a burst through one request per 200 ms and refuses what the bucket cannot hold', async () => {
    const answers = await Promise.all(Array.from({ length: 7 }, () => ask(`${app.url}/forward`)));
    const passed = answers.filter((a) => a.status === 200);
    expect(passed).toHaveLength(5);
    expect(statuses(answers).filter((s) => s === 429)).toHaveLength(2);

    // Each was held for its slot, 200 ms apart...
    const waits = passed.map((a) => a.body.waitedMs as number).sort((x, y) => x - y);
    expect(waits).toEqual([0, 200, 400, 600, 800]);
    // ...so the upstream saw them spread over 800 ms, not all at once (timers fire late, never early).
    const forwardedAt = passed.map((a) => a.body.forwardedAt as number).sort((x, y) => x - y);
    expect(forwardedAt[4]! - forwardedAt[0]!).toBeGreaterThanOrEqual(790);
  });
});

import { ask, listenExpress, startEach, statuses } from '../shared/listen.js';
import { createApp } from './app.js';

describe('examples/shaping', () => {
  const app = startEach(() => listenExpress(createApp()));

  it('lets a burst through one request per 200 ms and refuses what the bucket cannot hold', async () => {
    const answers = await Promise.all(Array.from({ length: 7 }, () => ask(`${app.url}/forward`)));
    const passed = answers.filter((a) => a.status === 200);
    expect(passed).toHaveLength(5);
    expect(statuses(answers).filter((s) => s === 429)).toHaveLength(2);

    // The upstream saw them 200 ms apart, not all at once.
    const forwardedAt = passed.map((a) => a.body.forwardedAt as number).sort((x, y) => x - y);
    for (let i = 1; i < forwardedAt.length; i++) {
      expect(forwardedAt[i]! - forwardedAt[i - 1]!).toBeGreaterThanOrEqual(180);
    }
    const waits = passed.map((a) => a.body.waitedMs as number).sort((x, y) => x - y);
    expect(waits[0]).toBe(0);
    expect(waits[4]).toBeGreaterThanOrEqual(700);
  });
});

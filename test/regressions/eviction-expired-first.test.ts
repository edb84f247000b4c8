import { createLimiter, MemoryStore } from '@sluice/core';
import { manualClock } from '@sluice/core/testing';

// With maxKeys reached and 1,000 expired keys present, 58 of 1,000 live subjects were evicted (a fresh
// quota for each) while expired keys stayed: eviction looked at a few entries for an expired one, then
// dropped the least recently used live key. The contract: expired keys go first. Failed on 13f5928.
describe('MemoryStore at maxKeys', () => {
  it('evicts every expired key before any live one', async () => {
    const clock = manualClock();
    const store = new MemoryStore({ maxKeys: 3000, clock });
    const short = createLimiter({ store, name: 'short', limit: 1, window: '1s', algorithm: 'fixed-window' });
    const long = createLimiter({ store, name: 'long', limit: 1, window: '1h', algorithm: 'fixed-window' });
    // Live keys first (the least recently used), then 1,000 keys that will expire, interleaved with more live ones.
    for (let i = 0; i < 1000; i++) await long.consume(`live-${i}`);
    for (let i = 0; i < 1000; i++) {
      await short.consume(`gone-${i}`);
      await long.consume(`later-${i}`);
    }
    expect(store.size).toBe(3000);
    clock.advance(1000);
    // 1,000 new subjects need room: the 1,000 expired keys give it.
    for (let i = 0; i < 1000; i++) await long.consume(`new-${i}`);
    let refreshed = 0;
    for (let i = 0; i < 1000; i++) {
      if ((await long.consume(`live-${i}`)).allowed) refreshed++;
      if ((await long.consume(`later-${i}`)).allowed) refreshed++;
    }
    expect(refreshed).toBe(0);
  });
});

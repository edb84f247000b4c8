import { createLimiter, MemoryStore } from '@sluice/core';

/**
 * `Limiter.decide` is public (the Limiter interface) and, unlike consume/peek, does not check its
 * subject. A JavaScript caller passing numeric user ids (`limiter.decide(user.id, 1, 'consume')`)
 * must not put every user on one counter. Failed with 16c6cd7's memoryKey, which digested any
 * non-string to one key.
 */
describe('limiter.decide with a non-string subject on a MemoryStore', () => {
  it('two numeric subjects are not one counter (or are refused)', () => {
    const limiter = createLimiter({ limit: 1, window: '1h', store: new MemoryStore() });
    const decide = limiter.decide.bind(limiter) as (
      subject: unknown,
      cost: number,
      mode: 'consume',
    ) => unknown;
    let second: unknown;
    try {
      decide(42, 1, 'consume');
      second = decide(43, 1, 'consume');
    } catch (error) {
      expect(error).toBeInstanceOf(TypeError); // refusing the subject is fine too
      return;
    }
    expect(second).toMatchObject({ allowed: true });
  });
});

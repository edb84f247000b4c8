import { createLimiter, MemoryStore } from '@sluice/core';

/**
 * `Limiter.decide` is public (the Limiter interface) and, unlike consume/peek, does not check its
 * subject: a JavaScript caller may pass numeric user ids. Each must count on its own, and keep
 * counting (or be refused from the first call), never share a counter or throw half way. Failed with
 * 16c6cd7's memoryKey (every non-string digested to one key) and with 074d0fd's encodeHeld (a held
 * number, another subject in between: TypeError from the third call on); 185d728 counts them.
 */
describe('limiter.decide with a non-string subject on a MemoryStore', () => {
  const user = { toString: () => 'user-1' };

  it.each([
    ['numbers', [42, 43, 42, 42]],
    ['an object, a string in between', [user, 'other', user, user]],
  ])('%s: each its own counter, limited, on every call', (_, subjects) => {
    const limiter = createLimiter({ limit: 2, window: '1h', store: new MemoryStore() });
    const decide = limiter.decide.bind(limiter) as (
      subject: unknown,
      cost: number,
      mode: 'consume',
    ) => {
      allowed: boolean;
    };
    const seen = subjects.map((subject) => {
      try {
        return decide(subject, 1, 'consume').allowed;
      } catch (error) {
        return error instanceof TypeError ? 'TypeError' : String(error);
      }
    });
    // Refusing the subject from the first call is an answer too; counting it is 185d728's.
    if (seen[0] === 'TypeError') expect(seen).toEqual(subjects.map(() => 'TypeError'));
    else expect(seen).toEqual([true, true, true, false]);
  });
});

import { createLimiter, MemoryStore } from '@sluice/core';

/**
 * `Limiter.decide` is public and does not check its subject (decide-non-string.test.ts). At 185d728
 * a numeric (or object) subject was its own key on the memory fast path: counted, and limited, on
 * every call. encodeHeld (074d0fd) reads `subject.charCodeAt` once the space holds the subject and
 * another subject came in between (encodeSubject's last-subject cache missed): the client's first
 * calls are charged, every later one throws TypeError, so an app that fails open on a limiter error
 * lets that client through unlimited, and one that fails closed locks it out for the window.
 */
describe('limiter.decide with a non-string subject the memory store already holds', () => {
  const decideOf = (limiter: ReturnType<typeof createLimiter>) =>
    limiter.decide.bind(limiter) as (subject: unknown, cost: number, mode: 'consume') => { allowed: boolean };

  it('a numeric subject seen before, another subject in between, is decided as before (or refused from the start)', () => {
    const decide = decideOf(createLimiter({ limit: 2, window: '1h', store: new MemoryStore() }));
    const seen: Array<boolean | string> = [];
    for (const subject of [42, 43, 42, 42]) {
      try {
        seen.push(decide(subject, 1, 'consume').allowed);
      } catch (error) {
        seen.push(error instanceof TypeError ? 'TypeError' : String(error));
      }
    }
    // Either every call refused up front, or 42 spends its limit of 2 and is then denied.
    if (seen[0] === 'TypeError') expect(seen).toEqual(['TypeError', 'TypeError', 'TypeError', 'TypeError']);
    else expect(seen).toEqual([true, true, true, false]);
  });

  it('an object subject seen before, another subject in between, is decided as before (or refused from the start)', () => {
    const decide = decideOf(createLimiter({ limit: 2, window: '1h', store: new MemoryStore() }));
    const user = { toString: () => 'user-1' };
    const seen: Array<boolean | string> = [];
    for (const subject of [user, 'other', user, user]) {
      try {
        seen.push(decide(subject, 1, 'consume').allowed);
      } catch (error) {
        seen.push(error instanceof TypeError ? 'TypeError' : String(error));
      }
    }
    if (seen[0] === 'TypeError') expect(seen).toEqual(['TypeError', 'TypeError', 'TypeError', 'TypeError']);
    else expect(seen).toEqual([true, true, true, false]);
  });
});

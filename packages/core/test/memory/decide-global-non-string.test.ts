import { createLimiter, type Decision, MemoryStore } from '@sluice/core';

/**
 * A global policy on the memory fast path keys every call by '' and, since 33a1c9c, encodes the
 * subject only when the decision is refunded (giveBackOnce(..., encoded=false)). decide does not check
 * its subject (decide-non-string.test.ts): a subject encodeSubject cannot take (undefined here) was
 * refused at once on 9647f1a (encodeHeld threw in decide); now the call is charged and its refund
 * rejects with a TypeError, so the charge can never be given back (skipFailedRequests-style refunds
 * swallow the rejection and keep the charge).
 */
describe('limiter.decide on a global policy with a subject that is no string', () => {
  it('decide with a subject that is no string: refused at once, or its refund works', async () => {
    const store = new MemoryStore();
    const limiter = createLimiter({ limit: 3, window: '1m', scope: 'global', store });
    const decide = limiter.decide.bind(limiter) as (s: unknown, c: number, m: 'consume') => Decision;
    let decision: Decision;
    try {
      decision = decide(undefined, 1, 'consume');
    } catch (error) {
      expect(error).toBeInstanceOf(TypeError);
      return;
    }
    await expect(decision.refund!()).resolves.toBeUndefined();
  });
});

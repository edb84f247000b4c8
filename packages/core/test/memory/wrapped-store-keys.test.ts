import { createLimiter, MemoryStore, type Store } from '@sluice/core';

/**
 * A Store of the app's own that delegates to a MemoryStore (metrics, logging: docs/stores.md's
 * "an object implementing its Store interface") carries no MEMORY_KEYS mark, so its limiters key
 * subjects by encodeSubject; a limiter given the MemoryStore itself keys them by memoryKey. Both
 * write the one MemoryStore under one name, as at 185d728 they shared counters (every limiter keyed
 * by encodeSubject then): a subject that encodeSubject escapes must still meet itself.
 */
function wrap(inner: MemoryStore, calls: string[]): Store {
  return {
    local: true,
    clock: inner.clock,
    consume: (call) => {
      calls.push('consume');
      return inner.consume(call);
    },
    refund: (call) => inner.refund(call),
    reset: (limiter, subject) => inner.reset(limiter, subject),
  };
}

function pair() {
  const store = new MemoryStore();
  const calls: string[] = [];
  const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  try {
    const direct = createLimiter({ name: 'login', limit: 2, window: '1m', store });
    const wrapped = createLimiter({ name: 'login', limit: 2, window: '1m', store: wrap(store, calls) });
    return { direct, wrapped, calls };
  } finally {
    warn.mockRestore();
  }
}

describe('a limiter on a MemoryStore and one on a Store that delegates to it', () => {
  it.each([
    ['plain', 'id:user-42'],
    ['with a space', 'id:Jane Doe'],
    ['with a brace', 'id:{x}'],
    ['over 64 characters', `id:${'x'.repeat(80)}`],
  ])('a subject %s spends one counter through either limiter', async (_, subject) => {
    const { direct, wrapped, calls } = pair();
    await wrapped.consume(subject);
    await wrapped.consume(subject);
    expect(calls).toHaveLength(2);
    expect((await direct.peek(subject)).allowed).toBe(false);
  });

  it('a reset through the direct limiter lifts what the wrapped one counted', async () => {
    const { direct, wrapped } = pair();
    const subject = 'id:Jane Doe';
    await wrapped.consume(subject);
    await wrapped.consume(subject);
    expect((await wrapped.consume(subject)).allowed).toBe(false);
    await direct.reset(subject);
    expect((await wrapped.consume(subject)).allowed).toBe(true);
  });
});

import { createLimiter, MemoryStore } from '@sluice/core';

/**
 * Two limiters of one name on one MemoryStore share counters where policy names match (the
 * NAME_REUSE warning: "they share counters only where policy names match"; API.md: how two routes
 * share a limit). One limiter with that policy alone (the memory fast path) and one with it and
 * another policy must then key a subject alike.
 */
const minute = { name: 'per-minute', limit: 2, window: '1m' } as const;
const day = { name: 'per-day', limit: 100, window: '1d' } as const;

function pair() {
  const store = new MemoryStore();
  const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  try {
    const single = createLimiter({ name: 'login', policies: [minute], store });
    const multi = createLimiter({ name: 'login', policies: [minute, day], store });
    return { single, multi };
  } finally {
    warn.mockRestore();
  }
}

describe('one name, one shared policy, one and two policies on a MemoryStore', () => {
  it.each([
    ['plain', 'id:user-42'],
    ['with a space', 'id:Jane Doe'],
    ['over 64 characters', `id:${'x'.repeat(80)}`],
  ])('a subject %s spends the shared policy through either limiter', async (_, subject) => {
    const { single, multi } = pair();
    await multi.consume(subject);
    await multi.consume(subject);
    expect((await single.peek(subject)).allowed).toBe(false);
  });

  it('a reset through the one-policy limiter lifts the shared policy for the other', async () => {
    const { single, multi } = pair();
    const subject = 'id:Jane Doe';
    await multi.consume(subject);
    await multi.consume(subject);
    expect((await multi.consume(subject)).allowed).toBe(false);
    await single.reset(subject);
    expect((await multi.consume(subject)).allowed).toBe(true);
  });

  it("a subject written as another's encoded form does not spend that subject's counter", async () => {
    const { single, multi } = pair();
    await single.consume('id:Jane%20Doe');
    await single.consume('id:Jane%20Doe');
    expect((await multi.consume('id:Jane Doe')).allowed).toBe(true);
  });
});

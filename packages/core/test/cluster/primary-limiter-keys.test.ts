import { createLimiter, MemoryStore, type Store } from '@sluice/core';

/**
 * docs/stores.md: "In the primary, `ClusterStore.primary().store` is the shared MemoryStore, for a
 * limiter in the primary process." A limiter there and a worker's limiter of the same name count one
 * subject together. The primary runs a worker's call on that MemoryStore with the subject exactly as
 * the worker encoded it (primary.ts: `this.store.consume({ limiter, subject: sub, ... })`, and
 * `this.store.reset(limiter, sub)`); `viaWorker` does the same in process (Jest's worker cannot be a
 * cluster primary), so the worker's limiter takes the path any non-MemoryStore takes.
 */
function viaWorker(primaryStore: MemoryStore): Store {
  return {
    local: false,
    consume: (call) => primaryStore.consume(call),
    refund: (call) => primaryStore.refund(call),
    reset: (limiter, subject) => primaryStore.reset(limiter, subject),
  };
}

const options = { name: 'api', limit: 2, window: '1h' } as const;

/** A limiter in the primary on its MemoryStore, and one in a worker whose calls the primary runs there. */
function limiters() {
  const primaryStore = new MemoryStore();
  return {
    inPrimary: createLimiter({ ...options, store: primaryStore }),
    inWorker: createLimiter({ ...options, store: viaWorker(primaryStore), denyCacheMs: 0 }),
  };
}

describe('a limiter in the cluster primary and the workers share one counter per subject', () => {
  it.each([
    ['a plain subject', 'id:user-42'],
    ['a subject with a space', 'id:Jane Doe'],
    ['a subject with #', 'id:order#7'],
    ['a non-ASCII subject', 'id:José'],
    ['a subject over 64 characters', `id:${'x'.repeat(80)}`],
  ])('%s: charges in the workers count in the primary', async (_, subject) => {
    const { inPrimary, inWorker } = limiters();
    for (let i = 0; i < 2; i++) await inWorker.consume(subject);
    expect((await inPrimary.peek(subject)).allowed).toBe(false);
  });

  it.each([
    ['a subject with a space', 'id:Jane Doe'],
    ['a subject over 64 characters', `id:${'x'.repeat(80)}`],
  ])('%s: a reset in the primary lifts the limit the workers reached', async (_, subject) => {
    const { inPrimary, inWorker } = limiters();
    await inWorker.consume(subject);
    await inWorker.consume(subject);
    expect((await inWorker.consume(subject)).allowed).toBe(false);
    await inPrimary.reset(subject);
    expect((await inWorker.consume(subject)).allowed).toBe(true);
  });

  it("a subject written as another's worker key does not spend that subject's limit", async () => {
    const { inPrimary, inWorker } = limiters();
    // 'id:Jane%20Doe' is what encodeSubject makes of 'id:Jane Doe', the key the workers count under.
    await inPrimary.consume('id:Jane%20Doe');
    await inPrimary.consume('id:Jane%20Doe');
    expect((await inWorker.consume('id:Jane Doe')).allowed).toBe(true);
  });
});

import * as core from '@sluice/core';

/**
 * Two copies of @sluice/core in one process (the CommonJS and ES module builds both loaded, or two
 * installs of one release: the case channel.ts's Symbol.for guards for ClusterStore) must key a
 * MemoryStore's subjects alike. MEMORY_KEYS is a plain Symbol(), so a limiter of the other copy does
 * not see the store's mark and keys by encodeSubject, where the store's own copy keys by memoryKey.
 * Before 16c6cd7 every path keyed by encodeSubject, whichever copy made the limiter.
 */
function otherCopy(): typeof core {
  let copy: typeof core | undefined;
  jest.isolateModules(() => {
    copy = require('@sluice/core') as typeof core;
  });
  expect(copy!.MemoryStore).not.toBe(core.MemoryStore); // really a second copy
  return copy!;
}

const SUBJECTS = ['user#1', 'id:jos\u00e9', `id:${'x'.repeat(80)}`];
const options = { name: 'shared', limit: 2, window: '1h' } as const;

describe('limiters of two copies of @sluice/core on one MemoryStore', () => {
  it.each(SUBJECTS)('share the counter of %j', async (subject) => {
    const other = otherCopy();
    const store = new core.MemoryStore();
    const mine = core.createLimiter({ ...options, store });
    const theirs = other.createLimiter({ ...options, store });
    await mine.consume(subject);
    await mine.consume(subject);
    expect((await theirs.consume(subject)).allowed).toBe(false);
  });

  it.each(SUBJECTS)("a reset through the other copy's limiter lifts %j", async (subject) => {
    const other = otherCopy();
    const store = new core.MemoryStore();
    const mine = core.createLimiter({ ...options, store });
    const theirs = other.createLimiter({ ...options, store });
    await mine.consume(subject);
    await mine.consume(subject);
    await theirs.reset(subject);
    expect((await mine.consume(subject)).allowed).toBe(true);
  });
});

import * as core from '@sluice/core';
import { ErrorCodes, type Limiter, MemoryStore, type Store } from '@sluice/core';
import { encodeSubject } from '../../src/keys.js';

/**
 * Every writer of one MemoryStore keys a subject alike, so limiters of one name share its counters
 * and resets whichever path each takes. 16c6cd7 keyed the single-policy memory path by a cheaper
 * form of its own (memoryKey): for any subject encodeSubject escapes or digests, each pair below got
 * two counters (a client had the limit twice) and a reset through one missed the other's. Found by
 * hostile reviews (helper-40, -42, -43), each pair failing on the commit it reviewed; all pass on
 * 185d728, before any of it. The cluster pair runs in real processes too:
 * cluster/primary-limiter-scenario.test.ts.
 */

const options = { name: 'login', limit: 2, window: '1m' } as const;

/** Two limiters of one name over one MemoryStore: `writer` spends, `reader` looks and resets. */
interface Pair {
  writer: Limiter;
  reader: Limiter;
}

/** A Store that hands every call to `inner`, as an app's metrics wrapper or the cluster primary does. */
function delegating(inner: MemoryStore, local: boolean): Store {
  return {
    local,
    ...(local ? { clock: inner.clock } : {}),
    consume: (call) => inner.consume(call),
    refund: (call) => inner.refund(call),
    reset: (limiter, subject) => inner.reset(limiter, subject),
  };
}

/** The package loaded a second time (the CommonJS and ES module builds of one app, two installs). */
function otherCopy(): typeof core {
  let copy: typeof core | undefined;
  jest.isolateModules(() => {
    copy = require('@sluice/core') as typeof core;
  });
  expect(copy!.MemoryStore).not.toBe(core.MemoryStore);
  return copy!;
}

/** Each pair, how to make it, and the warnings making it emits (NAME_REUSE where one store object sees both). */
const PAIRS: Array<[string, () => Pair, string[]]> = [
  [
    'a limiter with the policy alone (the memory fast path) and one with a second policy',
    () => {
      const store = new MemoryStore();
      const day = { name: 'per-day', limit: 100, window: '1d' } as const;
      const minute = { name: 'per-minute', limit: 2, window: '1m' } as const;
      return {
        writer: core.createLimiter({ name: 'login', policies: [minute, day], store }),
        reader: core.createLimiter({ name: 'login', policies: [minute], store }),
      };
    },
    [ErrorCodes.NAME_REUSE],
  ],
  [
    'a limiter on a Store of the app that delegates to the MemoryStore, and one on the MemoryStore',
    () => {
      const store = new MemoryStore();
      return {
        writer: core.createLimiter({ ...options, store: delegating(store, true) }),
        reader: core.createLimiter({ ...options, store }),
      };
    },
    [],
  ],
  [
    "a cluster worker's limiter (its calls run on the primary's store) and one in the primary",
    () => {
      // ClusterStore.primary().store, which a worker's ClusterStore reaches over IPC (Jest's worker
      // cannot be a cluster primary: the scenario test runs the real thing).
      const store = new MemoryStore();
      return {
        writer: core.createLimiter({ ...options, store: delegating(store, false), denyCacheMs: 0 }),
        reader: core.createLimiter({ ...options, store }),
      };
    },
    [],
  ],
  [
    'limiters of two copies of the package',
    () => {
      const store = new MemoryStore();
      return {
        writer: otherCopy().createLimiter({ ...options, store }),
        reader: core.createLimiter({ ...options, store }),
      };
    },
    [],
  ],
];

const SUBJECTS = [
  ['plain', 'id:user-42'],
  ['with a space', 'id:Jane Doe'],
  ['with a brace', 'id:{x}'],
  ['with #', 'id:order#7'],
  ['not ASCII', 'id:jos\u00e9'],
  ['over 64 characters', `id:${'x'.repeat(80)}`],
];

describe.each(PAIRS)('one MemoryStore: %s', (_, make, warnings) => {
  function pair(): Pair {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const made = make();
      expect(warn.mock.calls.map((call) => (call[1] as { code?: string }).code)).toEqual(warnings);
      return made;
    } finally {
      warn.mockRestore();
    }
  }

  async function spent(subject: string): Promise<Pair> {
    const made = pair();
    for (let i = 0; i < options.limit; i++) expect((await made.writer.consume(subject)).allowed).toBe(true);
    return made;
  }

  it.each(SUBJECTS)('a subject %s spends one counter through either', async (_, subject) => {
    const { reader } = await spent(subject);
    expect((await reader.peek(subject)).allowed).toBe(false);
  });

  it.each(SUBJECTS)(
    'a reset of a subject %s through one lifts what the other counted',
    async (_, subject) => {
      const { writer, reader } = await spent(subject);
      await reader.reset(subject);
      expect((await writer.consume(subject)).allowed).toBe(true);
    },
  );

  it("a subject written as another's key is counted on its own", async () => {
    const { reader } = await spent('id:Jane Doe');
    expect((await reader.consume(encodeSubject('id:Jane Doe'))).allowed).toBe(true);
  });
});

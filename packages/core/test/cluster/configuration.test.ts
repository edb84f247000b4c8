import cluster from 'node:cluster';
import { ClusterStore, createLimiter, ErrorCodes, MemoryStore, SluiceConfigError } from '@sluice/core';

/**
 * ClusterStore where it cannot work fails at construction with ERR_SLUICE_INVALID_STORE, naming what
 * to do instead (Jest's process is no cluster worker); and the primary's side in a process of its own.
 */
describe('ClusterStore outside a cluster worker', () => {
  it('is a configuration error that points the primary to ClusterStore.primary()', () => {
    expect(cluster.isPrimary).toBe(true);
    const build = () => new ClusterStore();
    expect(build).toThrow(SluiceConfigError);
    expect(build).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_STORE, option: 'ClusterStore' }),
    );
    expect(build).toThrow(/in the primary process call ClusterStore.primary\(\)/);
  });

  it('rejects unknown options and malformed timeouts first', () => {
    expect(() => new ClusterStore({ maxKeys: 5 } as never)).toThrow(
      expect.objectContaining({ code: ErrorCodes.UNKNOWN_OPTION, option: 'ClusterStore.maxKeys' }),
    );
    expect(() => new ClusterStore({ timeout: 'soon' })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_DURATION, option: 'ClusterStore.timeout' }),
    );
  });
});

describe('ClusterStore.primary()', () => {
  it('returns one primary per process, whose store a limiter in the primary can use', async () => {
    const primary = ClusterStore.primary({ maxKeys: 10 });
    try {
      expect(ClusterStore.primary()).toBe(primary);
      expect(primary.store).toBeInstanceOf(MemoryStore);
      expect(primary.limiters).toBe(0);
      const limiter = createLimiter({ limit: 1, window: '1m', store: primary.store });
      expect((await limiter.consume('a')).allowed).toBe(true);
      expect((await limiter.consume('a')).allowed).toBe(false);
    } finally {
      primary.close();
    }
    // Closed: the next call starts another.
    const next = ClusterStore.primary();
    expect(next).not.toBe(primary);
    next.close();
  });

  it('checks its options as MemoryStore does', () => {
    expect(() => ClusterStore.primary({ maxKeys: 0 })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_LIMIT, option: 'MemoryStore.maxKeys' }),
    );
    expect(() => ClusterStore.primary({ store: 1 } as never)).toThrow(
      expect.objectContaining({ code: ErrorCodes.UNKNOWN_OPTION, option: 'ClusterStore.primary.store' }),
    );
  });

  it("tells Sluice's messages from the app's", () => {
    expect(ClusterStore.isMessage({ sluice: 'cluster/1', id: 1 })).toBe(true);
    expect(ClusterStore.isMessage({ id: 1, op: 'c' })).toBe(false);
    expect(ClusterStore.isMessage('sluice')).toBe(false);
    expect(ClusterStore.isMessage(null)).toBe(false);
  });
});

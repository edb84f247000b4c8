import { algorithms } from '../../src/algorithms/index.js';
import {
  decodeSteps,
  describeLimiter,
  encodeSteps,
  rebuildLimiter,
} from '../../src/stores/cluster/protocol.js';
import type { StoreLimiter } from '../../src/stores/store.js';

/** The wire format: a limiter travels as plain data and comes back as the same policies; outcomes keep Infinity. */
const limiter: StoreLimiter = {
  prefix: 'p',
  name: 'api',
  policies: [
    {
      algorithm: algorithms['token-bucket'],
      params: { limit: 10, windowMs: 1000, burst: 20 },
      scope: 'subject',
      namespace: 'p:api:10-per-1s:tb',
    },
    {
      algorithm: algorithms.concurrency,
      params: { limit: 3, windowMs: 60_000, burst: 3 },
      scope: 'global',
      namespace: 'p:api:3-concurrent:cc',
    },
  ],
};

describe('cluster protocol', () => {
  it('rebuilds a limiter from its description, algorithms by name', () => {
    const def = JSON.parse(JSON.stringify(describeLimiter(limiter)));
    expect(def).toEqual({
      prefix: 'p',
      name: 'api',
      global: true,
      policies: [
        ['token-bucket', 10, 1000, 20, 0, 'p:api:10-per-1s:tb'],
        ['concurrency', 3, 60_000, 3, 1, 'p:api:3-concurrent:cc'],
      ],
    });
    expect(rebuildLimiter(def)).toEqual({ ...limiter, hasGlobalPolicy: true });
  });

  it.each([
    ['not an object', 'x'],
    ['no policies', { prefix: 'p', name: 'n', global: false, policies: [] }],
    [
      'an unknown algorithm',
      { prefix: 'p', name: 'n', global: false, policies: [['toString', 1, 1, 1, 0, 'k']] },
    ],
    ['a zero limit', { prefix: 'p', name: 'n', global: false, policies: [['gcra', 0, 1, 1, 0, 'k']] }],
    ['a bad scope', { prefix: 'p', name: 'n', global: false, policies: [['gcra', 1, 1, 1, 2, 'k']] }],
    ['a missing namespace', { prefix: 'p', name: 'n', global: false, policies: [['gcra', 1, 1, 1, 0]] }],
  ])('refuses a description with %s', (_what, def) => {
    expect(rebuildLimiter(def)).toBeUndefined();
  });

  it('carries Infinity through JSON, which has none', () => {
    const steps = [
      { allowed: false, remaining: 0, resetMs: 500, retryAfterMs: Number.POSITIVE_INFINITY, delayMs: 0 },
      { allowed: true, remaining: 2, resetMs: 0, retryAfterMs: 0, delayMs: 250 },
    ];
    const wire = JSON.parse(JSON.stringify(encodeSteps(steps)));
    expect(wire).toEqual([0, 0, 500, -1, 0, 1, 2, 0, 0, 250]);
    expect(decodeSteps(wire, 2)).toEqual(steps);
    expect(decodeSteps(wire, 3)).toBeUndefined();
    expect(decodeSteps([...wire.slice(0, 9), null], 2)).toBeUndefined();
  });
});

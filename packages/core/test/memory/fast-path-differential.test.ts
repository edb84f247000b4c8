import { createLimiter, type Decision, type Limiter, MemoryStore } from '@sluice/core';
import fc from '../../../../test/support/fast-check.js';
import { allowWarnings } from '../../../../test/support/warnings.js';
import { digest, encodeSubject } from '../../src/keys.js';

// A two-policy limiter writes the fast limiter's namespace: the same name, on purpose.
allowWarnings('ERR_SLUICE_NAME_REUSE');

/**
 * The memory fast path (limiter.decide on exactly a MemoryStore: decideSubject, which looks a subject
 * up as itself while its policy holds no escaped or digested key, and refunds that encode it late)
 * against the same limiter on a MemoryStore subclass, which the fast path does not take (consume,
 * with encodeSubject's key). The same calls on the same clock must get the same answers, a throw
 * included: subjects posing as each other's keys and subjects that are no string (decide does not
 * check them), expiry, eviction (a few keys), refunds, resets, peeks, costs, a second writer of the
 * namespace, both scopes. After each call, the stores hold as many keys, and HeldKeys.foreign counts
 * the held keys that are an escape or a digest. From helper-45's attack on 33a1c9c: a global policy
 * charged decide(undefined) and its refund threw.
 */
class Generic extends MemoryStore {}

const long = (s: string) => `${s}${'x'.repeat(70)}`;
const posing = ['a b', 'é', '\ud800', '#', '%', '', 'ab', 'a{b}'].flatMap((s) => [
  s,
  encodeSubject(s),
  encodeSubject(encodeSubject(s)),
  long(s),
  encodeSubject(long(s)),
  `#${digest(long(s))}`,
]);
const notStrings: unknown[] = [42, 0, -0, { toString: () => 'ab' }, new String('a b'), undefined, null];
const algorithms = ['fixed-window', 'sliding-window', 'sliding-log', 'token-bucket', 'gcra', 'leaky-bucket'];

/** What a decide answered: its allowed and remaining, or the class of what it threw. */
function answerOf(limiter: Limiter, subject: unknown, cost: number, mode: 'consume' | 'peek') {
  try {
    const decision = limiter.decide(subject as string, cost, mode) as Decision;
    return { decision, seen: [decision.allowed, decision.remaining] };
  } catch (error) {
    return { decision: undefined, seen: ['threw', (error as Error).constructor.name] };
  }
}

/** Per namespace of `store`: [HeldKeys.foreign, the escaped or digested keys it holds]. */
function foreignCounts(store: MemoryStore): Array<[number, number]> {
  const { spaces } = store as unknown as { spaces: Map<string, Map<unknown, unknown> & { foreign: number }> };
  return [...spaces.values()].map((space) => [
    space.foreign,
    [...space.keys()].filter((k) => typeof k === 'string' && (k.startsWith('#') || k.includes('%'))).length,
  ]);
}

const call = fc.oneof(
  fc.tuple(
    fc.constantFrom('consume', 'consume', 'peek', 'refund', 'reset', 'other'),
    fc.constantFrom<unknown>(...new Set(posing), ...notStrings),
    fc.integer({ min: 0, max: 4 }),
  ),
  fc.tuple(fc.constant('tick'), fc.constant(''), fc.integer({ min: 1, max: 40_000 })),
);

describe('the memory fast path decides as the generic path', () => {
  it.each(
    algorithms.flatMap((algorithm) => [
      [algorithm, 'subject'],
      [algorithm, 'global'],
    ]),
  )('%s, %s scope: the same answers, keys and foreign counts', async (algorithm, scope) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(call, { maxLength: 40 }),
        fc.integer({ min: 1, max: 5 }),
        async (calls, maxKeys) => {
          let now = 1_700_000_000_000;
          const clock = () => now;
          const fast = new MemoryStore({ clock, maxKeys });
          const generic = new Generic({ clock, maxKeys });
          const policy = {
            limit: 3,
            window: '1m',
            algorithm,
            ...(algorithm === 'leaky-bucket' ? { delay: false } : {}),
          };
          const one = { name: 'l', policies: [{ ...policy, scope }] };
          const two = { name: 'l', policies: [policy, { name: 'p2', limit: 100, window: '1h' }] };
          const [f, g] = [fast, generic].map((store) => createLimiter({ ...one, store } as never));
          const [f2, g2] = [fast, generic].map((store) => createLimiter({ ...two, store } as never));
          // The fast limiter makes its namespace's keys when built: the generic store gets them as early,
          // so that both sweep and evict their namespaces in one order.
          const { target } = f as unknown as { target: { policies: Array<{ namespace: string }> } };
          generic.spaceOf(target.policies[0]!.namespace);
          const charged: Array<[Decision, Decision]> = [];
          for (const [kind, subject, n] of calls) {
            if (kind === 'tick') {
              now += n;
              continue;
            }
            if (kind === 'consume' || kind === 'peek' || kind === 'other') {
              const [a, b] = kind === 'other' ? [f2!, g2!] : [f!, g!];
              const mode = kind === 'peek' ? 'peek' : 'consume';
              const x = answerOf(a, subject, n, mode);
              const y = answerOf(b, subject, n, mode);
              expect([kind, subject, ...x.seen]).toEqual([kind, subject, ...y.seen]);
              if (x.decision?.refund && y.decision?.refund) charged.push([x.decision, y.decision]);
            } else if (kind === 'refund') {
              const pair = charged.splice(n % Math.max(1, charged.length), 1)[0];
              if (pair !== undefined) {
                await pair[0].refund!();
                await pair[1].refund!();
              }
            } else if (typeof subject === 'string') {
              await f!.reset(subject);
              await g!.reset(subject);
            }
            now += 1;
            for (const [counted, held] of foreignCounts(fast)) expect(counted).toBe(held);
            expect(fast.size).toBe(generic.size);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

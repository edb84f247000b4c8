import {
  createLimiter,
  MemoryStore,
  type RedisClient,
  RedisStore,
  type RefundCall,
  type Store,
  type StoreCall,
  type StoreLimiter,
  type StoreOutcome,
} from '@sluice/core';
import { runTrace } from '@sluice/core/testing';
import { describeRedis } from '../../../../test/support/redis.js';
import { CLIENTS_AND_BACKENDS, closeClients, sharedClient, uniquePrefix } from './clients.js';
import { multi, SEEDS, single, tracesFor } from './policy-sets.js';
import { reported } from './store-calls.js';

/**
 * The same random traces on a manual clock give identical decisions on MemoryStore and RedisStore
 * (standalone and cluster, on every client): every algorithm alone, and multi-policy limiters with a global policy,
 * concurrency leases, refunds, releases, resets and peeks. Compared call by call at the store: a
 * decision is built from the store's outcome alone (decision.ts), so equal outcomes are equal decisions.
 */
/** One call a limiter made on its store, with the store's clock and, for consume, the memory store's answer. */
type Recorded =
  | { op: 'consume'; now: number; call: StoreCall; outcome: StoreOutcome }
  | { op: 'refund'; now: number; call: RefundCall }
  | { op: 'reset'; now: number; limiter: StoreLimiter; subject: string };

/**
 * A MemoryStore that writes down every call the limiter makes (consume, peek, refund, release, reset),
 * so that the very same calls can be replayed on a RedisStore at the same clock readings. Local, so
 * the limiter runs it without the failure policy (whose deny cache answers some calls itself).
 */
class RecordingStore implements Store {
  readonly local = true;
  readonly log: Recorded[] = [];
  private readonly memory: MemoryStore;

  constructor(readonly clock: () => number) {
    this.memory = new MemoryStore({ clock });
  }

  consume(call: StoreCall): StoreOutcome {
    const outcome = this.memory.consume(call);
    this.log.push({ op: 'consume', now: this.clock(), call, outcome });
    return outcome;
  }

  refund(call: RefundCall): void {
    this.log.push({ op: 'refund', now: this.clock(), call });
    this.memory.refund(call);
  }

  reset(limiter: StoreLimiter, subject: string): void {
    this.log.push({ op: 'reset', now: this.clock(), limiter, subject });
    this.memory.reset(limiter, subject);
  }
}

/** What a store reports. */
function outcomeOf({ now, steps }: StoreOutcome) {
  return { now, steps: reported(steps) };
}

/** Replays `log` on a RedisStore; returns the first outcome that differs from the memory store's. */
async function replay(client: RedisClient, log: readonly Recorded[]) {
  let now = 0;
  const store = new RedisStore({ client, clock: () => now });
  for (const [index, entry] of log.entries()) {
    now = entry.now;
    if (entry.op === 'refund') await store.refund(entry.call);
    else if (entry.op === 'reset') await store.reset(entry.limiter, entry.subject);
    else {
      const redis = outcomeOf(await store.consume(entry.call));
      const memory = outcomeOf(entry.outcome);
      if (JSON.stringify(redis) !== JSON.stringify(memory)) {
        const { subject, cost, mode } = entry.call;
        return { index, subject, cost, mode, redis, memory };
      }
    }
  }
  return null;
}

describeRedis('RedisStore parity with MemoryStore', () => {
  afterAll(closeClients);

  describe.each([...single, ...multi])('%s', (_label, policies) => {
    test.each(CLIENTS_AND_BACKENDS)(
      '%s, %s: the same outcome for every call of every trace',
      async (name, backend) => {
        const client = await sharedClient(name, backend);
        let denials = 0;
        let refunds = 0;
        for (const trace of tracesFor(policies)) {
          let recorder: RecordingStore | undefined;
          const prefix = uniquePrefix('parity');
          const results = await runTrace((clock) => {
            recorder = new RecordingStore(clock);
            return createLimiter({ policies, prefix, store: recorder });
          }, trace);
          expect(await replay(client, recorder!.log)).toBeNull();
          denials += results.filter((r) => r !== null && !r.allowed).length;
          refunds += recorder!.log.filter((e) => e.op === 'refund').length;
        }
        // The traces decide something: ones that only ever allow, or never give back, would prove little.
        expect(denials).toBeGreaterThan(SEEDS.length);
        expect(refunds).toBeGreaterThan(SEEDS.length);
      },
    );
  });
});

import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { createLimiter, type Policy, RedisStore } from '@sluice/core';
import type { Burst, BurstResult } from '@sluice/core/testing';
import { describeRedis } from '../../../../test/support/redis.js';
import { algorithmNames } from '../../src/algorithms/index.js';
import type { BurstMessage } from './burst-child.js';
import {
  type Backend,
  CLIENT_NAMES,
  type ClientName,
  closeClients,
  sharedClient,
  sharedTarget,
  type Target,
  uniquePrefix,
} from './clients.js';

/**
 * Four processes, each firing 500 concurrent consumes for one subject with a limit of 1000 in a long
 * window: exactly 1000 are allowed, for every algorithm, on a standalone server and on a cluster,
 * on every client, and with one process on each client at once (keys do not depend on the
 * client). With two policies, a denied call charges neither: the looser policy is left with exactly
 * its limit minus 1000.
 */
const PROCESSES = 4;
const CALLS = 500;
const LIMIT = 1000;
/** Long enough that no bucket refills a whole unit while the test runs. */
const DAY = '1d';

const singles: Policy[] = algorithmNames.map((algorithm) => ({ limit: LIMIT, window: DAY, algorithm }));

/** Two policies each: the first binds at LIMIT, the second is left with `spare` after the run. */
const pairs: Array<{ policies: Policy[]; spare: number }> = [
  {
    policies: [
      { limit: LIMIT, window: DAY, algorithm: 'fixed-window' },
      { limit: LIMIT + 200, window: DAY, algorithm: 'sliding-window' },
    ],
    spare: 200,
  },
  {
    policies: [
      { limit: LIMIT, window: DAY, algorithm: 'sliding-log' },
      { limit: LIMIT + 150, window: DAY, algorithm: 'token-bucket' },
    ],
    spare: 150,
  },
  {
    policies: [
      { limit: LIMIT, window: DAY, algorithm: 'gcra', scope: 'global' },
      { limit: LIMIT + 100, window: DAY, algorithm: 'concurrency' },
    ],
    spare: 100,
  },
];

/** As many processes as the widest run needs, each ready (loaded) before any burst; kept for every run. */
function startChildren(count: number): Promise<ChildProcess[]> {
  const launcher = join(__dirname, '../../../../test/support/ts-register.cjs');
  return Promise.all(
    Array.from({ length: count }, async () => {
      const child = fork(launcher, [join(__dirname, 'burst-child.ts')], { stdio: 'inherit' });
      await new Promise<void>((resolve, reject) => {
        child.once('message', () => resolve());
        child.once('exit', (code) => reject(new Error(`burst child exited (${code})`)));
      });
      return child;
    }),
  );
}

/** Every process fires its burst at once, the i-th on `clients[i]`; their results summed. */
async function fire(
  children: ChildProcess[],
  target: Target,
  clients: readonly ClientName[],
  burst: Burst,
): Promise<BurstResult> {
  const results = await Promise.all(
    clients.map(
      (client, i) =>
        new Promise<BurstResult>((resolve) => {
          const child = children[i]!;
          child.once('message', (m: { result: BurstResult }) => resolve(m.result));
          child.send({ target, client, burst } satisfies BurstMessage);
        }),
    ),
  );
  return results.reduce((sum, r) => ({
    allowed: sum.allowed + r.allowed,
    denied: sum.denied + r.denied,
    degraded: sum.degraded + r.degraded,
    errors: [...sum.errors, ...r.errors],
  }));
}

describeRedis('RedisStore atomicity under concurrent processes', () => {
  let children: ChildProcess[] = [];
  // Each child compiles the sources and loads every client: six at once took over 30 s on a loaded
  // 2-core machine (CI's Valkey pass, load average 17). Started once, they serve every run below.
  beforeAll(async () => {
    children = await startChildren(Math.max(PROCESSES, CLIENT_NAMES.length));
  }, 120_000);

  afterAll(() => {
    for (const child of children) {
      if (child.connected) child.send({ quit: true } satisfies BurstMessage);
    }
  });

  /** [label, backend, the client of each process] */
  const runs: Array<[string, Backend, ClientName[]]> = [];
  for (const backend of ['standalone', 'cluster'] as const) {
    for (const name of CLIENT_NAMES) runs.push([name, backend, Array(PROCESSES).fill(name)]);
    runs.push(['every client at once', backend, [...CLIENT_NAMES]]);
  }
  // Over HTTP (each process its own Upstash REST stand-in in front of the one server), and beside
  // clients over TCP: one set of keys whatever the client.
  runs.push(['@upstash/redis', 'standalone', Array(PROCESSES).fill('@upstash/redis')]);
  runs.push([
    '@upstash/redis with TCP clients',
    'standalone',
    ['@upstash/redis', 'ioredis', '@upstash/redis', 'node-redis v5'],
  ]);

  describe.each(runs)('%s, %s', (_label, backend, clients) => {
    let store: RedisStore;
    let target: Target;
    /** Every call of every process decided by Redis, exactly LIMIT of them allowed. */
    const exact = { allowed: LIMIT, denied: clients.length * CALLS - LIMIT, degraded: 0, errors: [] };

    beforeAll(async () => {
      store = new RedisStore({ client: await sharedClient(clients[0]!, backend) });
      target = await sharedTarget(backend);
    });

    afterAll(closeClients);

    test.each(singles.map((p) => [p.algorithm!, p] as const))(
      '%s: exactly the limit is allowed',
      async (_name, policy) => {
        const total = await fire(children, target, clients, {
          policies: [policy],
          prefix: uniquePrefix('atomic'),
          subject: 'hot',
          calls: CALLS,
        });
        expect(total).toEqual(exact);
      },
    );

    test.each(pairs.map((p) => [p.policies.map((q) => q.algorithm).join(' + '), p] as const))(
      '%s: all-or-nothing, a denied call charges no policy',
      async (_name, { policies, spare }) => {
        const prefix = uniquePrefix('atomic-pair');
        const total = await fire(children, target, clients, {
          policies,
          prefix,
          subject: 'hot',
          calls: CALLS,
        });
        expect(total).toEqual(exact);
        const seen = await createLimiter({ policies, prefix, store, storeTimeout: '30s' }).peek('hot');
        expect(seen.policies.map((p) => [p.allowed, p.remaining])).toEqual([
          [false, 0],
          [true, spare],
        ]);
      },
    );
  });
});

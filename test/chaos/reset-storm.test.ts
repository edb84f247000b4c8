import { type AlgorithmName, MemoryStore } from '@sluice/core';
import { eachFramework } from '../adapters/frameworks.js';
import { abandon, recording, serving, statuses, tick } from '../adapters/support.js';
import { ALGORITHMS } from '../fuzz/traces.js';
import { probe as newProbe, work } from '../support/aborting-clients.js';

/**
 * A reset storm on the synchronous path (MemoryStore: every decision made in process), on every
 * algorithm and every framework: clients reset their connections at random moments, before the limiter
 * runs (it comes after asynchronous middleware) and while their handlers work, half by a TCP reset,
 * half by a close. Never more handlers in flight than a concurrency limit, never more admitted than a
 * rate limit, and nothing charged to any subject but the one client's own (6cc09fa charged resets to the shared `ip:unknown` and ran them).
 */
jest.setTimeout(60_000);

const LIMIT = 3;
const WORK_MS = 200;
const CLIENTS = 18;

/** A deterministic spread of reset moments from 5 to 150 ms, so every run tries the same storm. */
const resetAfter = (i: number) => 5 + ((i * 37) % 146);

describe.each(eachFramework)('%s: a reset storm', (_, framework) => {
  const start = serving(framework);

  test.each(ALGORITHMS)(
    '%s: within the limit, charged to the client alone',
    async (algorithm: AlgorithmName) => {
      const store = recording(new MemoryStore());
      // An hour's window: nothing refills or rolls over while the storm lasts.
      const app = await start({ limit: LIMIT, window: '1h', algorithm, store }, { beforeMs: 30 });
      const probe = newProbe();
      app.control.work = () => work(probe, WORK_MS);
      await Promise.all(
        Array.from({ length: CLIENTS }, (_, i) => abandon(app, '/work', resetAfter(i), i % 2 === 0)),
      );
      await tick(WORK_MS + 150);
      expect(probe.most).toBeLessThanOrEqual(LIMIT);
      if (algorithm !== 'concurrency') expect(probe.ran).toBeLessThanOrEqual(LIMIT);
      // What the storm admitted is all that was spent: the client that stays has the rest (a leaky
      // bucket would hold those for their slots, 20 minutes apart: its count above says enough).
      if (algorithm !== 'concurrency' && algorithm !== 'leaky-bucket') {
        const left = await statuses(app, LIMIT - probe.ran + 1, '/ok');
        expect(left).toEqual([...Array(LIMIT - probe.ran).fill(200), 429]);
      }
      expect([...store.subjects]).toEqual(store.subjects.size === 0 ? [] : ['ip:127.0.0.1']);
    },
  );
});

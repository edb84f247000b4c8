/**
 * The entry of every cluster test process: `node --import test/chaos/register.mjs main.ts` with
 * SCENARIO set. The primary forks its workers from this same file (cluster.fork keeps the --import, so
 * workers run the TypeScript sources too), drives them with the app's own IPC messages, and prints one
 * `RESULT <json>` line for the test.
 */
import cluster from 'node:cluster';
import * as batching from './batching.js';
import * as busyPrimary from './busy-primary.js';
import * as olderPrimary from './older-primary.js';
import * as primaryLimiter from './primary-limiter.js';
import * as sharedLimit from './shared-limit.js';
import * as silentPrimary from './silent-primary.js';
import * as workerFaults from './worker-faults.js';

const scenarios: Record<string, { primary(): Promise<void>; worker(): void }> = {
  batching,
  'busy-primary': busyPrimary,
  'older-primary': olderPrimary,
  'primary-limiter': primaryLimiter,
  'shared-limit': sharedLimit,
  'silent-primary': silentPrimary,
  'worker-faults': workerFaults,
};

const scenario = scenarios[process.env.SCENARIO ?? ''];
if (scenario === undefined) throw new Error(`SCENARIO must be one of ${Object.keys(scenarios).join(', ')}`);
if (cluster.isPrimary) {
  scenario.primary().catch((error: unknown) => {
    process.stdout.write(`RESULT ${JSON.stringify({ crashed: String(error) })}\n`);
    process.exit(1);
  });
} else {
  scenario.worker();
}

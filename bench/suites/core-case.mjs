/**
 * Measures one core case in a process of its own (no other limiter's code shares its JIT state):
 * fills the subjects, then times batches of calls with tinybench. Prints { opsPerSec }.
 */
import { throughput } from '../lib/harness.mjs';
import { subjects } from '../lib/policies.mjs';
import { operationOf } from './core-cases.mjs';

const [path, impl, label, api, shape] = process.argv[2].split('|');
const settings = JSON.parse(process.argv[3]);
const many = shape === 'hot' ? ['hot-subject'] : subjects(settings.subjects);
const { op, isAsync } = await operationOf({ path, impl, case: label, api }, many.length);
const BATCH = settings.batch;

// Every subject is known before timing (the denied path: the hot subject is over its limit).
for (let round = 0; round < (path === 'denied' ? 200 : 1); round++) for (const s of many) await op(s);

/** Results go here so that no call can be optimised away. */
let sink;
let next = 0;
const loop = isAsync
  ? async () => {
      for (let i = 0; i < BATCH; i++) {
        sink = await op(many[next]);
        if (++next === many.length) next = 0;
      }
    }
  : () => {
      for (let i = 0; i < BATCH; i++) {
        sink = op(many[next]);
        if (++next === many.length) next = 0;
      }
    };
const opsPerSec = await throughput(process.argv[2], loop, settings);
process.stdout.write(JSON.stringify({ opsPerSec, sinkType: typeof sink }));
process.exit(0);

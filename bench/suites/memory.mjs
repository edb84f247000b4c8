/**
 * Suite 5, memory: resident memory of an Express app on the memory store after 1,000,000 distinct
 * subjects, Sluice with maxKeys at its default and at 100,000, beside the bare app and the memory
 * stores of express-rate-limit and rate-limiter-flexible. Each configuration runs in a fresh process.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { progress, SMOKE, writeResults } from '../lib/cli.mjs';

const SUBJECTS = SMOKE ? 20_000 : 1_000_000;
const CONFIGS = ['bare', 'sluice-default', 'sluice-100k', 'erl-memory', 'rlf-memory'];
const APP = fileURLToPath(new URL('./memory-app.mjs', import.meta.url));

function measure(config) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', APP, config, String(SUBJECTS)],
      { encoding: 'utf8', maxBuffer: 1 << 20 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${config}: ${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}

const started = Date.now();
const rows = [];
for (const config of CONFIGS) {
  const row = await measure(config);
  rows.push(row);
  progress(
    `memory: ${config}: ${(row.after.rss / 2 ** 20).toFixed(0)} MiB resident after ${SUBJECTS} subjects`,
  );
}
const file = writeResults('memory', {
  settings: { subjects: SUBJECTS },
  durationMs: Date.now() - started,
  rows,
});
progress(`memory: wrote ${file}`);

/**
 * Jest's order of test files: the longest first, by durations.json (seconds each file took in a full
 * run of CI, `jest` on the machine's Node), so that the two workers end together. Jest's own order
 * uses its timing cache, which a fresh clone lacks, and there puts the files it has not timed first by
 * size: in CI's first full run, after the Node 22 and 26 runs had timed the Redis suites alone, those
 * came last, one worker running them while the other waited. A file not listed (a new one) goes first.
 * Refresh durations.json from a CI log when the suite's shape changes.
 */
const { readFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..', '..');
const seconds = JSON.parse(readFileSync(join(__dirname, 'durations.json'), 'utf8'));

class LongestFirst {
  sort(tests) {
    const weight = (test) => seconds[relative(root, test.path)] ?? Number.MAX_SAFE_INTEGER;
    return [...tests].sort((a, b) => weight(b) - weight(a) || (a.path < b.path ? -1 : 1));
  }

  /** Nothing to keep: the order comes from durations.json. */
  cacheResults() {}

  shard(tests) {
    return tests;
  }
}

module.exports = LongestFirst;

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '../../../..');

/**
 * Two copies of @sluice/core in one worker (the dual package hazard, or two versions side by side),
 * each with a ClusterStore on the one IPC channel. Fails on 1e0ef51: each copy numbers its limiters
 * and calls from 1, the primary keys a worker's limiters by that number alone and keeps the first
 * definition, so copy B's limiter of 100 is decided on copy A's limiter of 1 (its counter too): it
 * allows one call and denies the rest, undegraded.
 */
test('two copies of @sluice/core in a worker keep their limiters apart', () => {
  const run = spawnSync(
    process.execPath,
    [join(ROOT, 'test/support/ts-register.cjs'), join(__dirname, 'child/two-copies.ts')],
    { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
  );
  const line = run.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  expect({ line: line !== undefined, stderr: line === undefined ? run.stderr : '' }).toEqual({
    line: true,
    stderr: '',
  });
  expect(JSON.parse(line!.slice('RESULT '.length))).toEqual([
    { one: [true, 0, false], hundred: [true, 99, false] },
    { one: [false, 0, false], hundred: [true, 98, false] },
    { one: [false, 0, false], hundred: [true, 97, false] },
  ]);
});

/**
 * A worker that loads two copies of @sluice/core (the dual package hazard: the app `require`s the
 * CommonJS build while a dependency `import`s the ES module one, or two versions side by side), each
 * with a ClusterStore, on one IPC channel. Run with test/support/ts-register.cjs (not a scenario of
 * main.ts): the worker's second copy is the sources required again after emptying require's cache.
 * Prints one `RESULT <json>` line: the decisions of a limiter of 1 (copy A) and one of 100 (copy B).
 */
import cluster from 'node:cluster';
import { join } from 'node:path';

const CORE = join(__dirname, '../../../src/index.ts');

function load(): typeof import('../../../src/index.js') {
  return require(CORE);
}

if (cluster.isPrimary) {
  const { ClusterStore } = load();
  ClusterStore.primary();
  cluster.setupPrimary({
    exec: join(__dirname, '../../../../../test/support/ts-register.cjs'),
    args: [__filename],
  });
  const worker = cluster.fork();
  const timer = setTimeout(() => {
    process.stdout.write(`RESULT ${JSON.stringify({ error: 'no answer from the worker' })}\n`);
    process.exit(1);
  }, 30_000);
  worker.on('message', (message: { result?: unknown }) => {
    if (message?.result === undefined) return;
    clearTimeout(timer);
    process.stdout.write(`RESULT ${JSON.stringify(message.result)}\n`);
    worker.kill();
    process.exit(0);
  });
} else {
  (async () => {
    const a = load();
    const sluiceModules = Object.keys(require.cache).filter((file) => file.includes('/packages/core/src/'));
    for (const file of sluiceModules) delete require.cache[file];
    const b = load();
    if (a.ClusterStore === b.ClusterStore) throw new Error('the second copy is the first');
    const one = a.createLimiter({
      prefix: 'a',
      store: new a.ClusterStore(),
      limit: 1,
      window: '1m',
      storeTimeout: '10s',
    });
    const hundred = b.createLimiter({
      prefix: 'b',
      store: new b.ClusterStore(),
      limit: 100,
      window: '1m',
      storeTimeout: '10s',
    });
    const rounds: Array<{ one: unknown[]; hundred: unknown[] }> = [];
    for (let i = 0; i < 3; i++) {
      const [x, y] = await Promise.all([one.consume('s'), hundred.consume('s')]);
      rounds.push({
        one: [x.allowed, x.remaining, x.degraded === true],
        hundred: [y.allowed, y.remaining, y.degraded === true],
      });
    }
    process.send!({ result: rounds });
  })().catch((error: unknown) => process.send!({ result: { error: String(error) } }));
}

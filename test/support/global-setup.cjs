// Starts one standalone redis-server and one Redis Cluster for the whole Jest run and hands their
// addresses to the workers through the environment (workers inherit it). Only when the run selects a
// Redis suite: a run limited to other paths starts nothing. REDIS_URL replaces the standalone server.
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { ENV_CLUSTER, ENV_URL, formatNodes, redisMissing, startCluster, startRedis } = require('./redis.ts');

/** The test files under `dir`, as Jest finds them (testMatch and testPathIgnorePatterns of jest.config.cjs). */
function testFiles(dir, into = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!['node_modules', 'dist', 'consumers'].includes(entry.name)) testFiles(path, into);
    } else if (entry.name.endsWith('.test.ts')) into.push(path);
  }
  return into;
}

/**
 * Whether a test file the run selects holds a Redis suite. Exact, not guessed from the patterns: a
 * Redis suite that found no shared server would start its own, which outlives a run in band (Jest's
 * own process never exits while it is there).
 */
function selectsRedis(globalConfig, projectConfig) {
  const patterns = (globalConfig.testPathPatterns?.patterns ?? []).map((p) => new RegExp(p, 'i'));
  return projectConfig.roots
    .flatMap((root) => testFiles(root))
    .some(
      (file) =>
        (patterns.length === 0 || patterns.some((pattern) => pattern.test(file))) &&
        readFileSync(file, 'utf8').includes('describeRedis('),
    );
}

module.exports = async (globalConfig, projectConfig) => {
  // One fast-check seed for the run's workers (test/support/fast-check.ts), so a failure can be drawn again.
  process.env.SLUICE_FC_SEED ??= String((Math.random() * 2 ** 31) | 0);
  if (!selectsRedis(globalConfig, projectConfig) || redisMissing() !== undefined) return;
  const [standalone, cluster] = await Promise.all([
    process.env.REDIS_URL ? undefined : startRedis(),
    startCluster(),
  ]);
  if (standalone !== undefined) process.env[ENV_URL] = standalone.url;
  process.env[ENV_CLUSTER] = formatNodes(cluster.nodes);
  globalThis.__SLUICE_REDIS__ = { standalone, cluster };
};

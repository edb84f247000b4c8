// Starts one standalone redis-server and one Redis Cluster for the whole Jest run and hands their
// addresses to the workers through the environment (workers inherit it). Only when the run may hold
// Redis suites: a run limited to other paths starts nothing. Without them, the Redis suites start
// servers of their own (test/support/redis.ts). REDIS_URL replaces the standalone server.
const { ENV_CLUSTER, ENV_URL, formatNodes, redisMissing, startCluster, startRedis } = require('./redis.ts');

/** Path patterns that may select a suite using Redis: none (the whole run) or one naming such a suite. */
function mayUseRedis(globalConfig) {
  const patterns = globalConfig.testPathPatterns?.patterns ?? [];
  if (patterns.length === 0) return true;
  return patterns.some((p) => /redis|cluster|chaos|fault|failure|store|security/i.test(p));
}

module.exports = async (globalConfig) => {
  if (!mayUseRedis(globalConfig) || redisMissing() !== undefined) return;
  const [standalone, cluster] = await Promise.all([
    process.env.REDIS_URL ? undefined : startRedis(),
    startCluster(),
  ]);
  if (standalone !== undefined) process.env[ENV_URL] = standalone.url;
  process.env[ENV_CLUSTER] = formatNodes(cluster.nodes);
  globalThis.__SLUICE_REDIS__ = { standalone, cluster };
};

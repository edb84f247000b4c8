// Stops the servers the global setup started.
module.exports = async () => {
  const shared = globalThis.__SLUICE_REDIS__;
  if (shared === undefined) return;
  globalThis.__SLUICE_REDIS__ = undefined;
  await Promise.all([shared.standalone?.stop(), shared.cluster.stop()]);
};

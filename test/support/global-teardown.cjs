// Audits the keys every suite left in the shared servers (no raw API key or token), then stops the
// servers the global setup started.
const { auditSharedServers } = require('../security/redis-keys.ts');

module.exports = async () => {
  const shared = globalThis.__SLUICE_REDIS__;
  if (shared === undefined) return;
  globalThis.__SLUICE_REDIS__ = undefined;
  let unhashed = [];
  try {
    unhashed = await auditSharedServers(shared);
  } finally {
    await Promise.all([shared.standalone?.stop(), shared.cluster.stop()]);
  }
  if (unhashed.length > 0) {
    throw new Error(
      `Redis keys hold an API key or token that is not hashed:\n${unhashed.slice(0, 20).join('\n')}`,
    );
  }
};

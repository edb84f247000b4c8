// The cluster first (from the repository root): docker compose --profile cluster up -d
// then: pnpm --filter redis-cluster start   (REDIS_CLUSTER_NODES defaults to 127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002)
import { connectCluster, exitIfUnreachable } from '@sluice-examples/shared/redis.js';
import { createApp } from './app.js';

const client = await connectCluster().catch(exitIfUnreachable);
const port = Number(process.env.PORT ?? 3000);
createApp({ client }).listen(port, '127.0.0.1', () => {
  console.log(`redis-cluster on http://127.0.0.1:${port}`);
  console.log(`  curl -i -H 'x-api-key: key-ada' http://127.0.0.1:${port}/api/things`);
  console.log(`  curl -i -X POST -H 'x-api-key: key-ada' http://127.0.0.1:${port}/checkout`);
});

// pnpm --filter observability start     (or, after pnpm build: node examples/observability/server.js)
// With REDIS_URL set, the limiters use that Redis and /metrics shows store latency and failures too:
// start one with `redis-server --port 6379` (apt-get install redis-server) or `docker compose up -d redis`.
import { connectRedis, exitIfUnreachable } from '@sluice-examples/shared/redis.js';
import { createApp } from './app.js';

const client = process.env.REDIS_URL ? await connectRedis().catch(exitIfUnreachable) : undefined;
const port = Number(process.env.PORT ?? 3000);
const { app } = createApp({ client });
app.listen(port, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${port}`;
  console.log(`observability on ${url} (${client ? `Redis ${process.env.REDIS_URL}` : 'in-memory store'})`);
  console.log(
    `  node examples/observability/client.js ${url}   # sends traffic, then prints the sluice_ metrics`,
  );
  console.log(`  curl -s ${url}/metrics | grep ^sluice_`);
});

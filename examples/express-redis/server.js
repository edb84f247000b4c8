// Redis first (from the repository root): docker compose up -d redis
// then: pnpm --filter express-redis start      (REDIS_URL defaults to redis://127.0.0.1:6379)
// Start a second one with PORT=3001 and watch both draw from the same quota.
import { connectRedis, exitIfUnreachable } from '@sluice-examples/shared/redis.js';
import { createApp } from './app.js';

const client = await connectRedis().catch(exitIfUnreachable);
const port = Number(process.env.PORT ?? 3000);
createApp({ client }).listen(port, '127.0.0.1', () => {
  console.log(
    `express-redis on http://127.0.0.1:${port} (Redis ${process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'})`,
  );
  console.log(`  curl -i http://127.0.0.1:${port}/`);
});

// Redis first (from the repository root): docker compose up -d redis
// then: pnpm --filter fastify-redis start      (REDIS_URL defaults to redis://127.0.0.1:6379)
import { connectRedis, exitIfUnreachable } from '@sluice-examples/shared/redis.js';
import { buildApp } from './app.js';

const client = await connectRedis().catch(exitIfUnreachable);
const port = Number(process.env.PORT ?? 3000);
const app = await buildApp({ client });
app.addHook('onClose', async () => {
  client.disconnect();
});
await app.listen({ port, host: '127.0.0.1' });
console.log(
  `fastify-redis on http://127.0.0.1:${port} (Redis ${process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'})`,
);
console.log(`  curl -i http://127.0.0.1:${port}/search`);
console.log(`  curl -i http://127.0.0.1:${port}/health`);

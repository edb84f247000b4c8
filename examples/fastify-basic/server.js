// pnpm --filter fastify-basic start     (or, after pnpm build: node examples/fastify-basic/server.js)
import { buildApp } from './app.js';

const port = Number(process.env.PORT ?? 3000);
const app = await buildApp();
await app.listen({ port, host: '127.0.0.1' });
console.log(`fastify-basic on http://127.0.0.1:${port}`);
console.log(`  curl -i http://127.0.0.1:${port}/`);
console.log(
  `  for i in 1 2 3 4; do curl -s -o /dev/null -w '%{http_code}\\n' http://127.0.0.1:${port}/search; done`,
);

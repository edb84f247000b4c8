// pnpm --filter resource-and-consumer start     (or, after pnpm build: node examples/resource-and-consumer/server.js)
import { buildApp } from './app.js';

const port = Number(process.env.PORT ?? 3000);
const app = await buildApp();
await app.listen({ port, host: '127.0.0.1' });
const url = `http://127.0.0.1:${port}/reports`;
console.log(`resource-and-consumer on ${url}`);
console.log(`  for c in a a a a b b b; do curl -s -X POST -H "x-api-key: key-$c" ${url}; echo; done`);

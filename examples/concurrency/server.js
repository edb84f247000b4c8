// pnpm --filter concurrency start     (or, after pnpm build: node examples/concurrency/server.js)
import { buildApp } from './app.js';

const port = Number(process.env.PORT ?? 3000);
const app = await buildApp();
await app.listen({ port, host: '127.0.0.1' });
const url = `http://127.0.0.1:${port}/export`;
console.log(
  `concurrency on ${url} (each export takes 2 s; 2 at a time per client: its API key, else its IP)`,
);
console.log(
  '  a refused one says Retry-After: 300, the lease expiry: the only bound known; a slot frees when an export ends',
);
console.log(`  for i in 1 2 3; do curl -s -o /dev/null -w '%{http_code}\\n' ${url} & done; wait`);
console.log(
  `  with a known key (key-ada, key-bob; any other key counts as none): curl -H 'x-api-key: key-ada' ${url}`,
);

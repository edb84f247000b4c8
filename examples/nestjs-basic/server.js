// pnpm --filter nestjs-basic start     (or, after pnpm build: node examples/nestjs-basic/server.js)
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3000);
const app = await createApp();
await app.listen(port, '127.0.0.1');
console.log(`nestjs-basic on http://127.0.0.1:${port}`);
console.log(`  curl -i http://127.0.0.1:${port}/`);
console.log(
  `  for i in 1 2 3 4 5 6; do curl -s -o /dev/null -w '%{http_code}\\n' -X POST http://127.0.0.1:${port}/login; done`,
);

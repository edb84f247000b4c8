// pnpm --filter hono-basic start     (or, after pnpm build: node examples/hono-basic/server.js)
import { serve } from '@hono/node-server';
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3000);
serve({ fetch: createApp().fetch, hostname: '127.0.0.1', port }, () => {
  console.log(`hono-basic on http://127.0.0.1:${port}`);
  console.log(`  curl -i http://127.0.0.1:${port}/`);
  console.log(
    `  for i in 1 2 3 4 5 6; do curl -s -o /dev/null -w '%{http_code}\\n' -X POST http://127.0.0.1:${port}/login; done`,
  );
});

// pnpm --filter tiered-plans start     (or, after pnpm build: node examples/tiered-plans/server.js)
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3000);
createApp().listen(port, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${port}/v1/things`;
  console.log(`tiered-plans on ${url}`);
  console.log(`  curl -i -H 'x-api-key: free-key-123' ${url}   # free: bursts of 5, 100 per hour`);
  console.log(`  curl -i -H 'x-api-key: pro-key-456' ${url}    # pro: bursts of 100, 10,000 per hour`);
  console.log(`  curl -i ${url}                                 # no key: free plan, by IP`);
});

// pnpm --filter login-protection start     (or, after pnpm build: node examples/login-protection/server.js)
import { createApp, TEN_FAILURES } from './app.js';

const port = Number(process.env.PORT ?? 3000);
createApp().listen(port, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${port}/login`;
  console.log(`login-protection on ${url}`);
  console.log(
    `  for i in $(seq 10); do curl -s -o /dev/null -w '%{http_code}\\n' -H 'content-type: application/json' -d '{"user":"ada","password":"guess"}' ${url}; done`,
  );
  console.log(
    `  # ${TEN_FAILURES.join(' ')}: 401 five times, 429 three times (each a strike), then 403 (banned for 15 minutes)`,
  );
});

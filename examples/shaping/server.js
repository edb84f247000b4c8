// pnpm --filter shaping start     (or, after pnpm build: node examples/shaping/server.js)
import { createApp } from './app.js';

const port = Number(process.env.PORT ?? 3000);
createApp().listen(port, '127.0.0.1', () => {
  const url = `http://127.0.0.1:${port}/forward`;
  console.log(`shaping on ${url}`);
  console.log(
    `  for i in $(seq 7); do curl -s ${url} & done; wait   # 5 let through 200 ms apart, 2 refused`,
  );
});

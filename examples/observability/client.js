// Sends the observability example some traffic, then prints the sluice_ lines of its /metrics:
//   node examples/observability/client.js http://127.0.0.1:3000
import { pathToFileURL } from 'node:url';

/** 5 logins (3 allowed) and 25 GETs (20 a minute in all), then the metrics the app exports. */
export async function drive(url) {
  for (let i = 0; i < 5; i++) await (await fetch(`${url}/login`, { method: 'POST' })).arrayBuffer();
  for (let i = 0; i < 25; i++) await (await fetch(`${url}/`)).arrayBuffer();
  const text = await (await fetch(`${url}/metrics`)).text();
  return text.split('\n').filter((line) => line.startsWith('sluice_'));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  drive(process.argv[2] ?? 'http://127.0.0.1:3000').then((lines) => console.log(lines.join('\n')));
}

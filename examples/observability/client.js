// Sends the observability example some traffic, then prints the sluice_ lines of its /metrics:
//   node examples/observability/client.js http://127.0.0.1:3000
import { pathToFileURL } from 'node:url';

/** 25 GETs (20 allowed a minute) and 5 logins (3 allowed), then the metrics the app exports. */
export async function drive(url) {
  for (let i = 0; i < 25; i++) await (await fetch(`${url}/`)).arrayBuffer();
  for (let i = 0; i < 5; i++) await (await fetch(`${url}/login`, { method: 'POST' })).arrayBuffer();
  const text = await (await fetch(`${url}/metrics`)).text();
  return text.split('\n').filter((line) => line.startsWith('sluice_'));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const lines = await drive(process.argv[2] ?? 'http://127.0.0.1:3000');
  console.log(lines.join('\n'));
}

/** One of the atomicity suite's processes: connects, waits for 'go', fires its calls at once, reports. */
import Redis from 'ioredis';
import { buildCase, SUBJECT } from './atomicity-cases.mjs';

const [port, caseName, calls] = process.argv.slice(2);
const client = new Redis({ port: Number(port), host: '127.0.0.1', enableAutoPipelining: true });
const { call, degraded } = buildCase(client, caseName);
await client.ping();
process.once('message', async () => {
  const results = await Promise.all(Array.from({ length: Number(calls) }, () => call(SUBJECT)));
  const report = { type: 'done', admitted: results.filter(Boolean).length, degraded: degraded?.() ?? 0 };
  process.send(report, () => {
    client.disconnect();
    process.disconnect();
  });
});
process.send({ type: 'ready' });

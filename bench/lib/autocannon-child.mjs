/** autocannon in a process of its own (the load must not share the orchestrator's event loop). */
import autocannon from 'autocannon';
import { clientAddress } from './load.mjs';

const { url, seconds, subjects, connections } = JSON.parse(process.argv[2]);
let next = 0;
const result = await autocannon({
  url,
  connections,
  duration: seconds,
  requests: [
    {
      setupRequest(request) {
        const address = clientAddress(subjects > 1 ? next++ % subjects : 0);
        request.headers = { ...request.headers, 'x-forwarded-for': address };
        return request;
      },
    },
  ],
});
const total = result.requests.total;
process.stdout.write(
  JSON.stringify({
    rps: total / (result.duration || seconds),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: total,
    non2xx: result.non2xx,
    errors: result.errors > 0 ? `${result.errors} errors, ${result.timeouts} timeouts` : null,
  }),
);

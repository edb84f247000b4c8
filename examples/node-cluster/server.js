// pnpm --filter node-cluster start     (or, after pnpm build: node examples/node-cluster/server.js)
// Then: for i in $(seq 11); do curl -s http://127.0.0.1:3000/; echo; done
// Each request may be served by another worker; the eleventh is refused all the same.
import cluster from 'node:cluster';
import { ClusterStore } from '@sluice/core';
import { createApp } from './app.js';

const WORKERS = Number(process.env.WORKERS ?? 4);
const port = Number(process.env.PORT ?? 3000);

if (cluster.isPrimary) {
  // Once, before forking: the primary holds the one MemoryStore every worker's limiter decides on.
  ClusterStore.primary();
  let stopping = false;
  let listening = 0;
  cluster.on('listening', () => {
    if (++listening === WORKERS) {
      console.log(`node-cluster: ${WORKERS} workers on http://127.0.0.1:${port}`);
      console.log(`READY ${port}`);
    }
  });
  // A worker that dies is replaced; the counters live in the primary, so the new one sees them.
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    console.log(`worker ${worker.id} died (${signal ?? code}); starting another`);
    cluster.fork();
  });
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      stopping = true;
      for (const worker of Object.values(cluster.workers ?? {})) worker?.kill();
      process.exit(0);
    });
  }
  for (let i = 0; i < WORKERS; i++) cluster.fork();
} else {
  // Every worker listens on the same port; the primary hands connections out in turn.
  createApp({ store: new ClusterStore() }).listen(port, '127.0.0.1');
}

import { setTimeout as sleep } from 'node:timers/promises';
import { rateLimiter } from '@sluice/express';
import sluice from '@sluice/fastify';
import express from 'express';
import Fastify from 'fastify';

/** The route of a scenario on both servers. */
export function routeOf(scenario) {
  return `/${scenario.algorithm}`;
}

/** An Express app with one limited route per scenario, each on its own in-memory store. */
export function expressApp(scenarios) {
  const app = express();
  for (const scenario of scenarios) {
    app.get(
      routeOf(scenario),
      rateLimiter({ name: scenario.algorithm, ...scenario.policy }),
      async (_req, res) => {
        if (scenario.holdMs) await sleep(scenario.holdMs);
        res.json({ ok: true });
      },
    );
  }
  return app;
}

/** The same routes on Fastify, each with its own `config.rateLimit`. */
export async function fastifyApp(scenarios) {
  const app = Fastify();
  await app.register(sluice, { global: false });
  for (const scenario of scenarios) {
    const rateLimit = { name: scenario.algorithm, ...scenario.policy };
    app.get(routeOf(scenario), { config: { rateLimit } }, async () => {
      if (scenario.holdMs) await sleep(scenario.holdMs);
      return { ok: true };
    });
  }
  return app;
}

/** Starts both on 127.0.0.1, ports chosen by the system; `close()` stops both. */
export async function startServers(scenarios) {
  const server = expressApp(scenarios).listen(0, '127.0.0.1');
  await new Promise((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const expressUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const fastify = await fastifyApp(scenarios);
  const fastifyUrl = await fastify.listen({ port: 0, host: '127.0.0.1' });
  return {
    expressUrl,
    fastifyUrl,
    async close() {
      server.closeAllConnections();
      await Promise.all([new Promise((resolve) => server.close(resolve)), fastify.close()]);
    },
  };
}

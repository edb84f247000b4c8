import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { MemoryStore, RedisStore } from '@sluice/core';
import { instrument } from '@sluice/core/otel';
import { rateLimiter } from '@sluice/express';
import express from 'express';

/**
 * Sluice's metrics on a Prometheus endpoint: `instrument()` turns every decision, store failure and
 * circuit change into OpenTelemetry metrics, and the Prometheus exporter serves them at /metrics.
 * Two limiters (the API, and login on top) so refusals show up by limiter and policy. With a Redis
 * client, store latency and store failures show up too; without one, the in-memory store.
 *
 * @param {{ client?: import('ioredis').Redis, prefix?: string }} [options]
 */
export function createApp({ client, prefix = 'sluice' } = {}) {
  // The exporter is a metric reader; its own HTTP server stays off: /metrics is a route of this app.
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter] });
  // The one line an app adds (without meterProvider: the global one).
  const stopMetrics = instrument({ meterProvider });

  const store = client === undefined ? new MemoryStore() : new RedisStore({ client });
  const app = express();
  app.get('/metrics', (req, res) => exporter.getMetricsRequestHandler(req, res));
  app.use(rateLimiter({ store, prefix, name: 'api', limit: 20, window: '1m' }));
  app.get('/', (_req, res) => res.json({ hello: 'world' }));
  const loginLimit = rateLimiter({
    store,
    prefix,
    name: 'login',
    limit: 3,
    window: '1m',
    algorithm: 'sliding-log',
  });
  app.post('/login', loginLimit, (_req, res) => res.json({ welcome: true }));

  const close = async () => {
    stopMetrics();
    await meterProvider.shutdown();
  };
  return { app, close };
}

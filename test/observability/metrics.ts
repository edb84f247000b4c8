import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';

/** A metric reader the test collects from on demand (the SDK's in-memory reading, no exporter). */
class TestReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

export interface Point {
  attributes: Record<string, unknown>;
  value: number | { count: number; sum?: number };
}

/** A meter provider and a way to read what it holds now: metric name -> its data points. */
export function testMeters() {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    meterProvider,
    async read(): Promise<Map<string, Point[]>> {
      const { resourceMetrics } = await reader.collect();
      const out = new Map<string, Point[]>();
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          out.set(
            metric.descriptor.name,
            metric.dataPoints.map((p) => ({
              attributes: p.attributes as Record<string, unknown>,
              value: p.value as Point['value'],
            })),
          );
        }
      }
      return out;
    },
    shutdown: () => meterProvider.shutdown(),
  };
}

/** The sum of a counter's points whose attributes include `where`. */
export function total(points: Point[] | undefined, where: Record<string, unknown> = {}): number {
  let sum = 0;
  for (const p of points ?? []) {
    if (Object.entries(where).every(([k, v]) => p.attributes[k] === v)) {
      sum += typeof p.value === 'number' ? p.value : p.value.count;
    }
  }
  return sum;
}

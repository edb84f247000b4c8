/**
 * `@sluice/core/otel`: OpenTelemetry metrics from Sluice's diagnostics channels. One call,
 * `instrument()`, subscribes; the function it returns unsubscribes. Attributes name the limiter and
 * the policy, never a subject or an address: one series per client would swamp any metrics backend.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { type MeterProvider, metrics } from '@opentelemetry/api';
import {
  type CircuitMessage,
  type DecisionMessage,
  DiagnosticChannels,
  type StoreErrorMessage,
} from '../diagnostics.js';

export interface InstrumentOptions {
  /** Default: the global meter provider (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider;
}

/** Store round trips are a fraction of a millisecond to a timeout of a few hundred. */
const STORE_SECONDS_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

/** Subscribes to Sluice's channels and records metrics; returns a function that unsubscribes. */
export function instrument(options: InstrumentOptions = {}): () => void {
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter('@sluice/core');
  const decisions = meter.createCounter('sluice.decisions', {
    description: 'Rate-limit decisions, by limiter, binding policy and outcome.',
    unit: '{decision}',
  });
  const degraded = meter.createCounter('sluice.decisions.degraded', {
    description: 'Decisions taken without the store (onStoreError), by limiter.',
    unit: '{decision}',
  });
  const storeDuration = meter.createHistogram('sluice.store.duration', {
    description: "The store's round trip for one decision.",
    unit: 's',
    advice: { explicitBucketBoundaries: STORE_SECONDS_BUCKETS },
  });
  const storeErrors = meter.createCounter('sluice.store.errors', {
    description: 'Store calls that failed or timed out, by limiter, store and kind.',
    unit: '{error}',
  });
  const circuits = meter.createUpDownCounter('sluice.circuit.open', {
    description: 'Limiters whose store circuit is open (calls kept away from a failing store).',
    unit: '{circuit}',
  });
  // An up-down counter must come back to 0: a limiter counts once while its circuit is open.
  const open = new Set<string>();

  const onDecision = (message: unknown): void => {
    const m = message as DecisionMessage;
    const outcome = m.allowed ? 'allowed' : m.reason === 'store-error' ? 'store_error' : 'denied';
    decisions.add(1, { 'sluice.limiter': m.limiter, 'sluice.policy': m.policy, 'sluice.outcome': outcome });
    if (m.degraded) degraded.add(1, { 'sluice.limiter': m.limiter });
    if (m.storeMs !== undefined) storeDuration.record(m.storeMs / 1000, { 'sluice.limiter': m.limiter });
  };
  const onStoreError = (message: unknown): void => {
    const m = message as StoreErrorMessage;
    storeErrors.add(1, {
      'sluice.limiter': m.limiter,
      'sluice.store': m.store,
      'error.type': m.timeout ? 'timeout' : 'error',
    });
  };
  const onCircuit = (message: unknown): void => {
    const m = message as CircuitMessage;
    if (m.state === 'open' && !open.has(m.limiter)) {
      open.add(m.limiter);
      circuits.add(1, { 'sluice.limiter': m.limiter });
    } else if (m.state === 'closed' && open.delete(m.limiter)) {
      circuits.add(-1, { 'sluice.limiter': m.limiter });
    }
  };

  subscribe(DiagnosticChannels.decision, onDecision);
  subscribe(DiagnosticChannels.storeError, onStoreError);
  subscribe(DiagnosticChannels.circuit, onCircuit);
  let subscribed = true;
  return () => {
    if (!subscribed) return;
    subscribed = false;
    unsubscribe(DiagnosticChannels.decision, onDecision);
    unsubscribe(DiagnosticChannels.storeError, onStoreError);
    unsubscribe(DiagnosticChannels.circuit, onCircuit);
    for (const limiter of open) circuits.add(-1, { 'sluice.limiter': limiter });
    open.clear();
  };
}

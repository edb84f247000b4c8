export type { ManualClock } from './manual-clock.js';
export { manualClock } from './manual-clock.js';
export { referenceTrace } from './reference-limiter.js';
export type { ReferenceModel, ReferenceStep } from './reference-models.js';
export { referenceModel, referenceRetryAfterMs, referenceStep } from './reference-models.js';
export type {
  LimiterFactory,
  RandomTraceOptions,
  TraceDecision,
  TraceOptions,
  TraceResult,
  TraceStep,
} from './trace.js';
export { randomTrace, runTrace } from './trace.js';

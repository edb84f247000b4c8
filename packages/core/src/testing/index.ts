export type { ManualClock } from './manual-clock.js';
export { manualClock } from './manual-clock.js';
export type { PolicySet, TraceSetOptions } from './policy-sets.js';
export { multiPolicySets, singlePolicySets, tracesFor } from './policy-sets.js';
export type { RecordedCall } from './recording-store.js';
export { RecordingStore } from './recording-store.js';
export { referenceTrace } from './reference-limiter.js';
export type { ReferenceModel, ReferenceStep } from './reference-models.js';
export { referenceModel, referenceRetryAfterMs, referenceStep } from './reference-models.js';
export type {
  AtomicityCase,
  Burst,
  BurstResult,
  StoreAtomicityOptions,
  StoreAtomicityReport,
} from './store-atomicity.js';
export { atomicityCases, checkStoreAtomicity, fireBurst, verifyBurst } from './store-atomicity.js';
export type { StoreFactory, StoreParityOptions, StoreParityReport } from './store-parity.js';
export { checkStoreParity } from './store-parity.js';
export type {
  LimiterFactory,
  RandomTraceOptions,
  TraceDecision,
  TraceOptions,
  TraceResult,
  TraceStep,
} from './trace.js';
export { randomTrace, runTrace } from './trace.js';

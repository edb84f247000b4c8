/**
 * What Sluice publishes on Node's diagnostics channels. Publishing is guarded by `hasSubscribers`, so
 * with nobody listening a decision costs one property read. Messages are plain objects that never hold
 * a subject, a request, a credential or a client address: a subscriber can log or count them as they
 * are. This module imports no node:diagnostics_channel, so the edge build can hold it: Node's entry
 * (index.ts) hands `useChannels` the real channels; elsewhere nothing listens and nothing is published.
 */
import type { Decision } from './decision.js';

/** The channel names, for `diagnostics_channel.subscribe(name, fn)`. */
export const DiagnosticChannels = {
  decision: 'sluice:decision',
  storeError: 'sluice:store-error',
  circuit: 'sluice:circuit',
} as const;

/** One decision on a request or a `consume` call (peeks are not published). */
export interface DecisionMessage {
  /** The limiter's `name`. */
  readonly limiter: string;
  /** The binding policy's name. */
  readonly policy: string;
  readonly allowed: boolean;
  readonly reason?: Decision['reason'];
  readonly remaining: number;
  readonly retryAfterMs: number;
  /** Decided without the store (`onStoreError`). */
  readonly degraded: boolean;
  /** The store's round trip, in ms, when the store answered this call. */
  readonly storeMs?: number;
}

/** A store call that failed or answered later than `storeTimeout`. */
export interface StoreErrorMessage {
  readonly limiter: string;
  /** `'redis'`, `'cluster'`, or the store's class name. */
  readonly store: string;
  /** True when the store was slower than `storeTimeout`. */
  readonly timeout: boolean;
  /** The error's message, with any credential in a URL removed. */
  readonly error: string;
}

export type CircuitState = 'open' | 'half-open' | 'closed';

/** The store's circuit as one limiter's calls see it change. */
export interface CircuitMessage {
  readonly limiter: string;
  readonly state: CircuitState;
}

/** What Sluice needs of a diagnostics channel. */
export interface Channel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}

/** A channel nobody can subscribe to: where there are no diagnostics channels. */
const silent: Channel = { hasSubscribers: false, publish() {} };

export let decisionChannel: Channel = silent;
export let storeErrorChannel: Channel = silent;
export let circuitChannel: Channel = silent;

/** Publishes on the channels `channel` names (node:diagnostics_channel's `channel`), from Node's entry. */
export function useChannels(channel: (name: string) => Channel): void {
  decisionChannel = channel(DiagnosticChannels.decision);
  storeErrorChannel = channel(DiagnosticChannels.storeError);
  circuitChannel = channel(DiagnosticChannels.circuit);
}

/** Publishes a decision; callers check `decisionChannel.hasSubscribers` first (a branch on the hot path). */
export function publishDecision(limiter: string, decision: Decision, storeMs?: number): void {
  const message: DecisionMessage = {
    limiter,
    policy: decision.policy,
    allowed: decision.allowed,
    reason: decision.reason,
    remaining: decision.remaining,
    retryAfterMs: decision.retryAfterMs,
    degraded: decision.degraded === true,
    storeMs,
  };
  decisionChannel.publish(message);
}

export function publishStoreError(limiter: string, store: string, timeout: boolean, error: unknown): void {
  if (!storeErrorChannel.hasSubscribers) return;
  const message: StoreErrorMessage = { limiter, store, timeout, error: safeMessage(error) };
  storeErrorChannel.publish(message);
}

export function publishCircuit(limiter: string, state: CircuitState): void {
  if (!circuitChannel.hasSubscribers) return;
  const message: CircuitMessage = { limiter, state };
  circuitChannel.publish(message);
}

/** `user:password@` in a URL, as client errors may quote a connection string. */
const URL_CREDENTIALS = /\/\/[^/@\s]*@/g;

/** An error's message with URL credentials removed, cut to a log line's length. */
export function safeMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(URL_CREDENTIALS, '//').slice(0, 500);
}

/** How a store is named in store-error messages. */
export function storeKind(store: object): string {
  const name = store.constructor?.name ?? 'Store';
  if (name === 'RedisStore') return 'redis';
  if (name === 'ClusterStore') return 'cluster';
  return name;
}

import cluster from 'node:cluster';
import type { Duration } from '../../duration.js';
import { parseDuration } from '../../duration.js';
import { describeValue, ErrorCodes, SluiceConfigError } from '../../errors.js';
import type { RefundCall, Store, StoreCall, StoreLimiter, StoreOutcome } from '../store.js';
import { type Channel, channelOf } from './channel.js';
import { type ClusterPrimary, type ClusterPrimaryOptions, startPrimary } from './primary.js';
import { type Answer, decodeSteps, isTagged } from './protocol.js';

export interface ClusterStoreOptions {
  /**
   * How long a call waits for the primary before it is given up and forgotten; default 10 s. The
   * limiter's `storeTimeout` (default 250 ms) decides the request long before: this only bounds what a
   * worker holds while its primary does not answer. Keep it above `storeTimeout`.
   */
  timeout?: Duration;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * A store for apps under Node's `cluster` module with no Redis: the primary holds one MemoryStore
 * (`ClusterStore.primary()`, once, before forking) and every worker's `new ClusterStore()` sends each
 * call to it as one IPC message. The primary runs one call at a time, so N workers keep one limit
 * exactly and several policies are charged all-or-nothing, on the primary's clock. Built on the Store
 * interface alone: a limiter treats it as any store that can fail (`storeTimeout`, `onStoreError`,
 * the circuit).
 *
 * Created outside a cluster worker it throws `ERR_SLUICE_INVALID_STORE` at once: with nobody to ask,
 * every call would fail, and a configuration that can never work is a configuration error.
 */
export class ClusterStore implements Store {
  readonly local = false;
  private readonly channel: Channel;
  private readonly timeoutMs: number;

  /**
   * Starts the primary's side: one MemoryStore that answers every worker. Call it once in the primary
   * process before `cluster.fork()`; a second call returns the same primary (its options are those of
   * the first call).
   */
  static primary(options?: ClusterPrimaryOptions): ClusterPrimary {
    return startPrimary(options);
  }

  /**
   * True for the messages ClusterStore sends and answers: an app that listens to its own IPC messages
   * (`process.on('message')`, `cluster.on('message')`) skips these.
   */
  static isMessage(message: unknown): boolean {
    return isTagged(message);
  }

  constructor(options: ClusterStoreOptions = {}) {
    if (typeof options !== 'object' || options === null) {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_OPTION,
        'ClusterStore',
        `expected an options object; got ${describeValue(options)}`,
      );
    }
    for (const key of Object.keys(options)) {
      if (key !== 'timeout') {
        throw new SluiceConfigError(
          ErrorCodes.UNKNOWN_OPTION,
          `ClusterStore.${key}`,
          'unknown option; expected timeout',
        );
      }
    }
    this.timeoutMs =
      options.timeout === undefined
        ? DEFAULT_TIMEOUT_MS
        : parseDuration(options.timeout, 'ClusterStore.timeout');
    const send = process.send;
    if (!cluster.isWorker || typeof send !== 'function') {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_STORE,
        'ClusterStore',
        cluster.isPrimary
          ? 'new ClusterStore() belongs in a worker forked by node:cluster; in the primary process call ClusterStore.primary() (its .store is the shared MemoryStore), and with no cluster use MemoryStore'
          : 'this worker has no IPC channel to its primary (process.send is missing)',
      );
    }
    this.channel = channelOf(send);
  }

  /** Calls of this process waiting for the primary (every ClusterStore of the process counted). */
  get pending(): number {
    return this.channel.size;
  }

  async consume(call: StoreCall): Promise<StoreOutcome> {
    const { limiter, subject, cost, leaseId, mode } = call;
    const reply = await this.channel.call(
      limiter,
      {
        op: mode === 'consume' ? 'c' : 'p',
        sub: subject,
        n: cost,
        lease: leaseId,
        exp: Date.now() + this.timeoutMs,
      },
      this.timeoutMs,
    );
    return outcomeOf(reply, limiter);
  }

  async refund(call: RefundCall): Promise<void> {
    const { cost, chargedAt, leaseId } = call.charge;
    await this.channel.call(
      call.limiter,
      { op: 'f', sub: call.subject, n: cost, lease: leaseId, at: chargedAt },
      this.timeoutMs,
    );
  }

  async reset(limiter: StoreLimiter, subject: string): Promise<void> {
    await this.channel.call(limiter, { op: 'r', sub: subject }, this.timeoutMs);
  }
}

function outcomeOf(reply: Answer, limiter: StoreLimiter): StoreOutcome {
  const steps = decodeSteps(reply.steps, limiter.policies.length);
  if (steps === undefined || typeof reply.now !== 'number') {
    throw new Error('the cluster primary answered with a malformed outcome');
  }
  return { now: reply.now, steps };
}

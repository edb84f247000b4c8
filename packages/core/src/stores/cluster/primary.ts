import cluster, { type Worker } from 'node:cluster';
import { safeMessage } from '../../diagnostics.js';
import { describeValue, ErrorCodes, SluiceConfigError } from '../../errors.js';
import { MemoryStore } from '../memory-store.js';
import type { StoreLimiter } from '../store.js';
import {
  type Answer,
  encodeSteps,
  isTagged,
  type Refusal,
  type Replies,
  type Reply,
  rebuildLimiter,
  TAG,
  TAG_VALUE,
} from './protocol.js';

export interface ClusterPrimaryOptions {
  /** Most keys the primary's MemoryStore holds; default 1,000,000 (see MemoryStore). */
  maxKeys?: number;
  /** The clock every worker's calls are decided by, in ms since the epoch; default the MemoryStore's. For tests. */
  clock?: () => number;
}

/** What `ClusterStore.primary()` returns: the one store of the cluster, answering its workers. */
export interface ClusterPrimary {
  /**
   * The store the workers' calls run on. A limiter in the primary process may use it too
   * (`createLimiter({ store: primary.store })`) and shares the workers' counters.
   */
  readonly store: MemoryStore;
  /** Limiters the primary knows, over every live worker (each worker's own are dropped when it exits). */
  readonly limiters: number;
  /** Stops answering workers; a later `ClusterStore.primary()` starts a new primary with a new store. */
  close(): void;
}

/**
 * Limiters kept per worker. A worker that builds limiters per request (a bug, warned of by the HTTP
 * layer) would otherwise grow the primary without bound; past this, the oldest is forgotten, and a call
 * naming it is answered 'unknown-limiter' so the worker sends its policies again.
 */
const MAX_LIMITERS_PER_WORKER = 4096;

let current: Primary | undefined;

/** The one primary of this process, started on the first call. */
export function startPrimary(options: ClusterPrimaryOptions | undefined): ClusterPrimary {
  if (cluster.isWorker) {
    throw new SluiceConfigError(
      ErrorCodes.INVALID_STORE,
      'ClusterStore.primary',
      'called in a cluster worker; call it once in the primary process, before cluster.fork(), and use new ClusterStore() in the workers',
    );
  }
  current ??= new Primary(parseOptions(options));
  return current;
}

function parseOptions(options: unknown): ClusterPrimaryOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) {
    throw new SluiceConfigError(
      ErrorCodes.INVALID_OPTION,
      'ClusterStore.primary',
      `expected an options object; got ${describeValue(options)}`,
    );
  }
  for (const key of Object.keys(options)) {
    if (key !== 'maxKeys' && key !== 'clock') {
      throw new SluiceConfigError(
        ErrorCodes.UNKNOWN_OPTION,
        `ClusterStore.primary.${key}`,
        'unknown option; expected maxKeys or clock',
      );
    }
  }
  return options as ClusterPrimaryOptions;
}

class Primary implements ClusterPrimary {
  readonly store: MemoryStore;
  /** Each worker's limiters by its number for them, oldest first. */
  private readonly byWorker = new Map<number, Map<number, StoreLimiter>>();

  constructor(options: ClusterPrimaryOptions) {
    // MemoryStore checks maxKeys and clock, naming them as its own options.
    this.store = new MemoryStore(options);
    cluster.on('message', this.onMessage);
    cluster.on('exit', this.onExit);
  }

  get limiters(): number {
    let count = 0;
    for (const limiters of this.byWorker.values()) count += limiters.size;
    return count;
  }

  close(): void {
    cluster.off('message', this.onMessage);
    cluster.off('exit', this.onExit);
    this.byWorker.clear();
    if (current === this) current = undefined;
  }

  /** Every worker message reaches every listener: the app's own are left to the app. */
  private readonly onMessage = (worker: Worker, message: unknown): void => {
    // A worker that died (or disconnected) with calls still in the pipe waits for no answer: running
    // them would charge for requests nobody serves, and would cache limiters of a worker that is gone.
    if (!isTagged(message) || !worker.isConnected()) return;
    const { calls } = message as { calls?: unknown };
    if (!Array.isArray(calls)) {
      const reply = this.replyTo(worker.id, message);
      // Marked: this primary reads `Calls`, so the worker may send its next turns' calls together.
      if (reply !== undefined) answer(worker, { [TAG]: TAG_VALUE, ...reply, b: 1 });
      return;
    }
    // The calls of one turn of the worker, in its order; their replies go back in one message.
    const replies: Answer[] = [];
    for (const call of calls) {
      const reply = this.replyTo(worker.id, call);
      if (reply !== undefined) replies.push(reply);
    }
    answer(worker, { [TAG]: TAG_VALUE, replies });
  };

  /** The reply to one call; undefined when it has no id to answer by. */
  private replyTo(workerId: number, call: unknown): Answer | undefined {
    if (typeof call !== 'object' || call === null) return undefined;
    const request = call as Record<string, unknown>;
    const id = request.id;
    if (typeof id !== 'number') return undefined;
    try {
      return this.run(workerId, id, request);
    } catch (error) {
      // A store error must not end the primary: the worker's call fails, its onStoreError decides.
      return refusal(id, 'failed', safeMessage(error));
    }
  }

  /** A worker that exited (crashed, killed or restarted) has no call to answer: its limiters go. */
  private readonly onExit = (worker: Worker): void => {
    this.byWorker.delete(worker.id);
  };

  private run(workerId: number, id: number, request: Record<string, unknown>): Answer {
    const { op, lim, def, sub, n, lease, at, exp } = request;
    if (typeof lim !== 'number' || typeof sub !== 'string') return refusal(id, 'bad-request');
    const limiter = this.limiterOf(workerId, lim, def);
    if (limiter === undefined) {
      return def === undefined
        ? refusal(id, 'unknown-limiter')
        : refusal(id, 'bad-request', 'malformed limiter');
    }
    switch (op) {
      case 'c':
      case 'p': {
        if (!isCount(n) || n === 0 || !isCount(lease)) return refusal(id, 'bad-request');
        // Given up by the worker (its `timeout` passed while this waited in the pipe): not charged.
        if (typeof exp === 'number' && exp < Date.now()) return refusal(id, 'expired');
        const mode = op === 'c' ? 'consume' : 'peek';
        const outcome = this.store.consume({ limiter, subject: sub, cost: n, leaseId: lease, mode });
        return { id, now: outcome.now, steps: encodeSteps(outcome.steps) };
      }
      case 'f': {
        if (!isCount(n) || !isCount(lease) || typeof at !== 'number') return refusal(id, 'bad-request');
        this.store.refund({ limiter, subject: sub, charge: { cost: n, chargedAt: at, leaseId: lease } });
        return { id };
      }
      case 'r':
        this.store.reset(limiter, sub);
        return { id };
      default:
        return refusal(id, 'bad-request');
    }
  }

  /** The worker's limiter `lim`: the one it described before, or the description it sends now. */
  private limiterOf(workerId: number, lim: number, def: unknown): StoreLimiter | undefined {
    let limiters = this.byWorker.get(workerId);
    const known = limiters?.get(lim);
    if (known !== undefined || def === undefined) return known;
    const rebuilt = rebuildLimiter(def);
    if (rebuilt === undefined) return undefined;
    if (limiters === undefined) {
      limiters = new Map();
      this.byWorker.set(workerId, limiters);
    }
    if (limiters.size >= MAX_LIMITERS_PER_WORKER) limiters.delete(limiters.keys().next().value!);
    limiters.set(lim, rebuilt);
    return rebuilt;
  }
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function refusal(id: number, err: Refusal, msg?: string): Answer {
  return msg === undefined ? { id, err } : { id, err, msg };
}

/**
 * Sends a reply unless the worker is gone. A worker can die between its call and the answer: with a
 * callback, a send on a closed channel reports to it instead of emitting 'error', which nothing
 * handles on a worker object and would end the primary.
 */
function answer(worker: Worker, reply: Reply | Replies): void {
  if (!worker.isConnected()) return;
  try {
    worker.send(reply, ignoreSendError);
  } catch {
    // The channel closed under us: that worker no longer waits for anything.
  }
}

function ignoreSendError(): void {}

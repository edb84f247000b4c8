/**
 * The worker's end of the IPC channel: sends the store calls of one turn of the event loop as one
 * message (once the primary has said it reads those; each alone until then) and settles each call with
 * the primary's reply, matched by id. One per process, shared by every ClusterStore in it, so the
 * process holds one listener whatever the number of stores.
 */
import type { StoreLimiter } from '../store.js';
import {
  type Answer,
  type Call,
  type Calls,
  describeLimiter,
  isTagged,
  type LimiterDef,
  type Replies,
  type Reply,
  type Request,
  TAG,
  TAG_VALUE,
} from './protocol.js';

/** What a worker remembers of a limiter it has sent calls of. */
interface LimiterEntry {
  readonly id: number;
  readonly def: LimiterDef;
  /** Whether the primary has answered a call of it: until then every call carries `def`. */
  known: boolean;
}

/** A call waiting for the primary. */
interface Pending {
  readonly request: Call;
  readonly limiter: LimiterEntry;
  readonly resolve: (reply: Answer) => void;
  readonly reject: (error: Error) => void;
  readonly deadline: number;
  /** Sent again once already, with its limiter's policies, after the primary had forgotten them. */
  resent: boolean;
}

/** The fields of a request that depend on the call. */
export type CallFields = Pick<Call, 'op' | 'sub' | 'n' | 'lease' | 'at' | 'exp'>;

/** The longest delay setTimeout takes (about 24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class Channel {
  private readonly pending = new Map<number, Pending>();
  private readonly limiters = new WeakMap<StoreLimiter, LimiterEntry>();
  private nextId = 1;
  private nextLimiter = 1;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the timer fires; Infinity when none is armed. */
  private timerAt = Number.POSITIVE_INFINITY;
  /** Calls of this turn, sent together once it ends. */
  private outbox: Call[] = [];
  /**
   * Whether the primary reads a turn's calls as one `Calls`: not until one of its answers says so
   * (`Reply.b`, or a `Replies`), as a primary of the release before would leave a `Calls` unanswered.
   */
  private batches = false;

  constructor(private readonly send: NonNullable<NodeJS.Process['send']>) {
    process.on('message', this.onMessage);
    process.on('disconnect', this.onDisconnect);
  }

  /** Calls waiting for the primary, over every store of this process. */
  get size(): number {
    return this.pending.size;
  }

  /**
   * Sends one call; settles with the primary's reply, or fails when the channel is closed, the
   * message cannot be sent, or no reply came within `timeoutMs` (the call is then forgotten: a late
   * reply is dropped).
   */
  call(limiter: StoreLimiter, fields: CallFields, timeoutMs: number): Promise<Answer> {
    if (!process.connected) return Promise.reject(gone());
    const entry = this.entryOf(limiter);
    const id = this.nextId++;
    const request: Call = entry.known
      ? { id, lim: entry.id, ...fields }
      : { id, lim: entry.id, def: entry.def, ...fields };
    return new Promise<Answer>((resolve, reject) => {
      const deadline = performance.now() + timeoutMs;
      this.pending.set(id, { request, limiter: entry, resolve, reject, deadline, resent: false });
      if (deadline < this.timerAt) this.arm(deadline);
      this.transmit(request);
    });
  }

  private entryOf(limiter: StoreLimiter): LimiterEntry {
    let entry = this.limiters.get(limiter);
    if (entry === undefined) {
      entry = { id: this.nextLimiter++, def: describeLimiter(limiter), known: false };
      this.limiters.set(limiter, entry);
    }
    return entry;
  }

  /** Queues a request; the first of a turn schedules the send of them all. */
  private transmit(request: Call): void {
    if (this.outbox.push(request) === 1) setImmediate(this.flush);
  }

  /**
   * One message for the calls of the turn: a lone call as itself, several as `Calls`; each alone while
   * the primary has not said it reads `Calls`.
   */
  private readonly flush = (): void => {
    const requests = this.outbox;
    this.outbox = [];
    if (requests.length > 1 && this.batches) this.post({ [TAG]: TAG_VALUE, calls: requests }, requests);
    else for (const request of requests) this.post({ [TAG]: TAG_VALUE, ...request }, [request]);
  };

  /** Sends one message; a send that fails fails the calls it carried. */
  private post(message: Request | Calls, requests: readonly Call[]): void {
    const failAll = (error: Error): void => {
      for (const request of requests) this.fail(request.id, error);
    };
    try {
      // With a callback, a failed send reports here rather than as an 'error' event on process.
      this.send(message, (error: Error | null) => {
        if (error !== null) failAll(error);
      });
    } catch (error) {
      failAll(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Every message reaches every listener: the app's own are left to the app. */
  private readonly onMessage = (message: unknown): void => {
    // A request (it has an op) is never a reply, even relayed back by an app that echoes messages.
    if (!isTagged(message) || 'op' in (message as object) || 'calls' in (message as object)) return;
    const { replies } = message as Partial<Replies>;
    if (Array.isArray(replies)) {
      this.batches = true;
      for (const reply of replies) this.settle(reply);
    } else {
      if ((message as Reply).b === 1) this.batches = true;
      this.settle(message as Reply);
    }
  };

  /** Settles the call a reply answers, if one still waits for it. */
  private settle(reply: Answer): void {
    if (typeof reply !== 'object' || reply === null) return;
    const waiting = this.pending.get(reply.id);
    // Not ours (another store's, or answered after its call was given up): nothing waits for it.
    if (waiting === undefined) return;
    if (reply.err === 'unknown-limiter' && !waiting.resent) {
      // The primary forgot this limiter (it keeps a bounded number per worker): send it again.
      waiting.limiter.known = false;
      waiting.resent = true;
      const { def: _def, ...rest } = waiting.request;
      const again: Call = { ...rest, def: waiting.limiter.def };
      this.pending.set(reply.id, { ...waiting, request: again });
      this.transmit(again);
      return;
    }
    this.pending.delete(reply.id);
    if (reply.err === undefined) {
      waiting.limiter.known = true;
      waiting.resolve(reply);
    } else {
      const detail = reply.msg === undefined ? '' : `: ${reply.msg}`;
      waiting.reject(new Error(`the cluster primary could not run the call (${reply.err}${detail})`));
    }
  }

  /** The primary is gone (or the worker is leaving): nothing will answer. */
  private readonly onDisconnect = (): void => {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const call of waiting) call.reject(gone());
  };

  private fail(id: number, error: Error): void {
    const waiting = this.pending.get(id);
    if (waiting === undefined) return;
    this.pending.delete(id);
    waiting.reject(error);
  }

  /** Gives up the calls past their deadline; the timer stays off while nothing waits. */
  private readonly expire = (): void => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [id, call] of this.pending) {
      if (call.deadline <= now) {
        this.pending.delete(id);
        call.reject(
          new Error(
            'the cluster primary did not answer in time (is ClusterStore.primary() called in the primary process?)',
          ),
        );
      } else if (call.deadline < next) next = call.deadline;
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  };

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    const delay = Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(at - performance.now())));
    // Unref'd: a store never keeps a process alive on its own.
    this.timer = setTimeout(this.expire, delay);
    this.timer.unref?.();
  }
}

function gone(): Error {
  return new Error('the cluster primary is gone (the IPC channel is closed)');
}

/**
 * Where the process keeps its channel: on globalThis, under a registered symbol, so that every copy of
 * this module in the process (the CommonJS and ES module builds both loaded, or two installs of one
 * release) shares it. Each copy with a channel of its own numbered its limiters and calls from 1 on the
 * one IPC channel: the primary, which knows a worker's limiters by that number, decided one copy's
 * limiter on the other's, and each copy took the other's answers to its calls of the same number. The
 * key names the channel's API (call, size): a build that changes it takes another key.
 */
const SHARED = Symbol.for('sluice: cluster/1 worker channel, API 1');

/** This process's channel to the primary; `send` is process.send, checked by the caller. */
export function channelOf(send: NonNullable<NodeJS.Process['send']>): Channel {
  const holder = globalThis as { [SHARED]?: Channel };
  holder[SHARED] ??= new Channel(send.bind(process));
  return holder[SHARED];
}

import type { State } from '../algorithms/index.js';
import { describeValue, ErrorCodes, SluiceConfigError } from '../errors.js';
import {
  decideAll,
  type RefundCall,
  type Store,
  type StoreCall,
  type StoreLimiter,
  type StoreOutcome,
} from './store.js';

export interface MemoryStoreOptions {
  /** Most keys held at once (one per subject and policy); default 1,000,000. */
  maxKeys?: number;
  /** Milliseconds since the epoch; default Date.now. Tests pass a manual clock. */
  clock?: () => number;
}

/** One key's state and bookkeeping. */
interface Slot {
  state: State | undefined;
  /** When the state means the same as none, in expiry units after the store's base, rounded up. */
  expiry: number;
  /** Value of the store's tick when the slot last moved to the young end of its map. */
  touched: number;
}

/** Entries the incremental sweep looks at per insert: expiry never needs a pass that blocks. */
const SWEEP_STEP = 2;
/** Entries looked at from each old end for an expired one before a live key is evicted. */
const EVICT_SCAN = 16;
/**
 * Expiry is kept in whole seconds after the store was created, rounded up: a small integer that V8
 * stores inline (a Smi), where epoch milliseconds would be a boxed double of 16 more bytes per key.
 * A state may then be kept up to a second after it expired, which changes no decision.
 */
const EXPIRY_UNIT_MS = 1000;

/**
 * An in-process store: bounded, least recently used evicted first (expired keys before live ones),
 * no timer per key. Keys live in one Map per policy namespace; each Map is kept in order of use, so
 * its first entry is its least recently used and eviction is O(namespaces).
 */
export class MemoryStore implements Store {
  readonly local = true;
  private readonly maxKeys: number;
  readonly clock: () => number;
  private readonly spaces = new Map<string, Map<string, Slot>>();
  private count = 0;
  private tick = 0;
  /** A slot is moved to the young end only when older than this many ticks: a hot key costs no reorder. */
  private readonly moveAfter: number;
  private sweep: Iterator<[string, Slot]> | undefined;
  private sweepSpace: Map<string, Slot> | undefined;
  /** The clock's reading at construction: expiry units count from here. */
  private readonly base: number;

  constructor(options: MemoryStoreOptions = {}) {
    if (typeof options !== 'object' || options === null) {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_OPTION,
        'MemoryStore',
        `expected an options object; got ${describeValue(options)}`,
      );
    }
    for (const key of Object.keys(options)) {
      if (key !== 'maxKeys' && key !== 'clock') {
        throw new SluiceConfigError(
          ErrorCodes.UNKNOWN_OPTION,
          `MemoryStore.${key}`,
          'unknown option; expected maxKeys or clock',
        );
      }
    }
    const { maxKeys = 1_000_000, clock = Date.now } = options;
    if (typeof maxKeys !== 'number' || !Number.isSafeInteger(maxKeys) || maxKeys <= 0) {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_LIMIT,
        'MemoryStore.maxKeys',
        `expected a positive integer; got ${describeValue(maxKeys)}`,
      );
    }
    if (typeof clock !== 'function') {
      throw new SluiceConfigError(
        ErrorCodes.INVALID_OPTION,
        'MemoryStore.clock',
        `expected a function; got ${describeValue(clock)}`,
      );
    }
    this.maxKeys = maxKeys;
    this.clock = clock;
    this.moveAfter = Math.max(1, maxKeys >>> 2);
    this.base = clock();
  }

  /** Keys held now, expired ones not yet swept included. */
  get size(): number {
    return this.count;
  }

  consume(call: StoreCall): StoreOutcome {
    const now = this.clock();
    const due = this.due(now);
    const { policies } = call.limiter;
    const slots: Array<Slot | undefined> = new Array(policies.length);
    const states: Array<State | undefined> = new Array(policies.length);
    for (let i = 0; i < policies.length; i++) {
      const policy = policies[i]!;
      const slot = this.read(policy.namespace, policy.scope === 'global' ? '' : call.subject, due);
      slots[i] = slot;
      states[i] = slot?.state;
    }
    const { steps, results, commit } = decideAll(call, states, now);
    if (commit) {
      for (let i = 0; i < policies.length; i++) {
        const policy = policies[i]!;
        const result = results[i]!;
        this.write(
          policy.namespace,
          policy.scope === 'global' ? '' : call.subject,
          slots[i],
          result.next,
          this.expiry(result.expiresAt),
          due,
        );
      }
    }
    return { now, steps };
  }

  refund(call: RefundCall): void {
    const now = this.clock();
    const due = this.due(now);
    for (const policy of call.limiter.policies) {
      const subject = policy.scope === 'global' ? '' : call.subject;
      const slot = this.read(policy.namespace, subject, due);
      if (slot === undefined) continue;
      const { next, expiresAt } = policy.algorithm.refund(slot.state, now, call.charge, policy.params);
      this.write(policy.namespace, subject, slot, next, this.expiry(expiresAt), due);
    }
  }

  reset(limiter: StoreLimiter, subject: string): void {
    for (const policy of limiter.policies) {
      if (policy.scope === 'subject' && this.spaces.get(policy.namespace)?.delete(subject)) this.count--;
    }
  }

  /** An absolute expiry in ms as expiry units, rounded up: never earlier than the state expires. */
  private expiry(expiresAt: number): number {
    return Math.ceil((expiresAt - this.base) / EXPIRY_UNIT_MS);
  }

  /** The expiry units that have fully passed at `now`: slots with an expiry up to this are expired. */
  private due(now: number): number {
    return Math.floor((now - this.base) / EXPIRY_UNIT_MS);
  }

  /** The live slot of a key, moved towards the young end if it has grown old; expired slots are dropped. */
  private read(namespace: string, subject: string, due: number): Slot | undefined {
    const space = this.spaces.get(namespace);
    const slot = space?.get(subject);
    if (slot === undefined) return undefined;
    if (slot.expiry <= due) {
      space!.delete(subject);
      this.count--;
      return undefined;
    }
    if (this.tick - slot.touched > this.moveAfter) {
      space!.delete(subject);
      space!.set(subject, slot);
      slot.touched = ++this.tick;
    }
    return slot;
  }

  private write(
    namespace: string,
    subject: string,
    slot: Slot | undefined,
    state: State | undefined,
    expiry: number,
    due: number,
  ): void {
    if (slot !== undefined) {
      slot.state = state;
      slot.expiry = expiry;
      return;
    }
    if (expiry <= due) return;
    let space = this.spaces.get(namespace);
    if (space === undefined) {
      space = new Map();
      this.spaces.set(namespace, space);
    }
    this.sweepSome(due);
    if (this.count >= this.maxKeys) this.evict(due);
    space.set(subject, { state, expiry, touched: ++this.tick });
    this.count++;
  }

  /** Looks at a few entries per insert, round robin over namespaces, and drops the expired ones. */
  private sweepSome(due: number): void {
    for (let n = 0; n < SWEEP_STEP; n++) {
      let entry = this.sweep?.next();
      if (entry === undefined || entry.done) {
        this.nextSweepSpace();
        entry = this.sweep?.next();
        if (entry === undefined || entry.done) return;
      }
      const [subject, slot] = entry.value;
      if (slot.expiry <= due && this.sweepSpace!.delete(subject)) this.count--;
    }
  }

  private nextSweepSpace(): void {
    const spaces = [...this.spaces.values()];
    const at = this.sweepSpace === undefined ? -1 : spaces.indexOf(this.sweepSpace);
    this.sweepSpace = spaces[(at + 1) % spaces.length];
    this.sweep = this.sweepSpace?.entries();
  }

  /** Makes room for one key: an expired one near an old end if there is one, else the least recently used. */
  private evict(due: number): void {
    let oldest: Map<string, Slot> | undefined;
    let oldestKey: string | undefined;
    let oldestTouched = Number.POSITIVE_INFINITY;
    for (const space of this.spaces.values()) {
      let scanned = 0;
      for (const [subject, slot] of space) {
        if (slot.expiry <= due) {
          space.delete(subject);
          this.count--;
          return;
        }
        if (scanned === 0 && slot.touched < oldestTouched) {
          oldest = space;
          oldestKey = subject;
          oldestTouched = slot.touched;
        }
        if (++scanned >= EVICT_SCAN) break;
      }
    }
    if (oldest?.delete(oldestKey!)) this.count--;
  }
}

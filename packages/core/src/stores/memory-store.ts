import { IN_PLACE, type NextState, type State } from '../algorithms/index.js';
import { describeValue, ErrorCodes, SluiceConfigError } from '../errors.js';
import { encodeSubject, HeldKeys } from '../keys.js';
import { unref } from '../portable/runtime.js';
import {
  decideAll,
  markLifeMs,
  markOf,
  marksApply,
  type PolicyOutcome,
  type RefundCall,
  type Store,
  type StoreCall,
  type StoreLimiter,
  type StoreOutcome,
  type StorePolicy,
  standing,
} from './store.js';

export interface MemoryStoreOptions {
  /** Most keys held at once (one per subject and policy); default 1,000,000. */
  maxKeys?: number;
  /** Milliseconds since the epoch; default Date.now (one reading shared by calls a moment apart). Tests pass a manual clock. */
  clock?: () => number;
}

/** Calls that may share one reading of the default clock within a run of work. */
const CALLS_PER_READING = 32;
/** A timer not run this long after it was set was lost (fake timers uninstalled) or waits on a busy loop. */
const TIMER_LOST_MS = 100;
let reading = 0;
let readingUses = 0;
/** When the timer that ends the shared reading was set; -Infinity when none is pending. */
let timerSetAt = Number.NEGATIVE_INFINITY;

function forgetReading(): void {
  readingUses = 0;
  timerSetAt = Number.NEGATIVE_INFINITY;
}

/**
 * The default clock. Date.now costs about a third of a decision, so one reading serves the calls that
 * follow it until the event loop next runs its timers (1 ms on) or CALLS_PER_READING calls have used
 * it: a reading is never older than about a millisecond plus the run of work that used it. An
 * injected clock is not shared: it is called on every call (tests move a manual clock between calls).
 */
function sharedNow(): number {
  if (readingUses > 0) {
    readingUses--;
    return reading;
  }
  return newReading();
}

/** Reads the clock for the next CALLS_PER_READING calls (apart: sharedNow stays small enough to inline). */
function newReading(): number {
  reading = Date.now();
  readingUses = CALLS_PER_READING - 1;
  if (reading - timerSetAt > TIMER_LOST_MS) {
    timerSetAt = reading;
    unref(setTimeout(forgetReading, 1));
  }
  return reading;
}

/**
 * One key: `[expiresAt, touched, ...state]` in one array, with no object around it (about 32 bytes
 * less per key than an object holding the state array). `expiresAt` is when the state means the same
 * as none; `touched` is the store's tick when the key last moved to the young end of its map.
 */
type Slot = number[];
/** The keys of one policy namespace, by subject, in order of use. */
export type KeySpace = HeldKeys<Slot>;
const EXPIRES_AT = 0;
const TOUCHED = 1;
/** Where the algorithm's state starts in a slot. */
const STATE = 2;

/** Where eviction stands in one namespace: its oldest entry, found once and kept until it changes. */
interface Cursor {
  entries: Iterator<[string, Slot]>;
  key: string | undefined;
  /** The slot's `touched` when the cursor reached it: a key moved or written anew since is no longer the oldest. */
  touched: number;
}

/** Entries the incremental sweep looks at per insert: expiry never needs a pass that blocks. */
const SWEEP_STEP = 2;
/** Further entries the sweep looks at for an expired one before a live key is evicted. */
const EVICT_SCAN = 16;

/**
 * An in-process store: bounded, least recently used evicted first (expired keys before live ones),
 * no timer per key. Keys live in one Map per policy namespace; each Map is kept in order of use, so
 * its first entry is its least recently used and eviction is O(namespaces).
 */
export class MemoryStore implements Store {
  readonly local = true;
  private readonly maxKeys: number;
  readonly clock: () => number;
  private readonly spaces = new Map<string, KeySpace>();
  private count = 0;
  private tick = 0;
  /** A slot is moved to the young end only when older than this many ticks: a hot key costs no reorder. */
  private readonly moveAfter: number;
  /**
   * No key expires before this: a lower bound, lowered by new keys and refunds (a decision only moves
   * a key's expiry later, so the hot path of a decision does not touch it). Eviction scans for expired
   * keys only past it.
   */
  private earliestExpiry = Number.POSITIVE_INFINITY;
  private sweep: Iterator<[string, Slot]> | undefined;
  private sweepSpace: KeySpace | undefined;
  /**
   * One eviction cursor per namespace. It only moves forward: a Map keeps deleted entries as holes
   * until it is rehashed, so finding the oldest entry afresh on every eviction would walk over every
   * key evicted before it (seconds per million evictions).
   */
  private readonly cursors = new Map<KeySpace, Cursor>();
  /** The key spaces of each limiter's policies, in its order: found once per limiter, not per call. */
  private readonly spacesByLimiter = new WeakMap<StoreLimiter, KeySpace[]>();
  /** Where the steps of a call write the states to store, one per policy: reused, never stored. */
  private readonly nexts: NextState[] = [[]];
  /** What the steps of one multi-policy call write into: `nexts`, or IN_PLACE for a state recorded in place. */
  private readonly callNexts: NextState[] = [];

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
    const { maxKeys = 1_000_000, clock = sharedNow } = options;
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
  }

  /** Keys held now, expired ones not yet swept included. */
  get size(): number {
    return this.count;
  }

  consume(call: StoreCall): StoreOutcome {
    const now = this.clock();
    const { policies } = call.limiter;
    const spaces = this.spacesOf(call.limiter);
    if (policies.length === 1) {
      const { subject, cost, leaseId, mode } = call;
      const policy = policies[0]!;
      const key = policy.scope === 'global' ? '' : subject;
      const slot = this.read(spaces[0]!, key, now);
      return { now, steps: [this.decideOne(policy, spaces[0]!, key, slot, cost, leaseId, mode, now)] };
    }
    const slots: Array<Slot | undefined> = new Array(policies.length);
    for (let i = 0; i < policies.length; i++) {
      const subject = policies[i]!.scope === 'global' ? '' : call.subject;
      slots[i] = this.read(spaces[i]!, subject, now);
    }
    while (this.nexts.length < policies.length) this.nexts.push([]);
    // A state its algorithm records in place is not copied into a next state (IN_PLACE).
    const nexts = this.callNexts;
    nexts.length = policies.length;
    for (let i = 0; i < policies.length; i++) {
      nexts[i] =
        slots[i] !== undefined && policies[i]!.algorithm.record !== undefined ? IN_PLACE : this.nexts[i]!;
    }
    const { steps, results, commit } = decideAll(call, slots, STATE, now, nexts);
    if (commit) {
      for (let i = 0; i < policies.length; i++) {
        const policy = policies[i]!;
        const result = results[i]!;
        const key = policy.scope === 'global' ? '' : call.subject;
        if (nexts[i] === IN_PLACE) {
          this.record(policy, spaces[i]!, key, slots[i]!, call.cost, result.expiresAt, now);
          continue;
        }
        this.write(spaces[i]!, key, slots[i], this.nexts[i]!, result.expiresAt, now);
      }
    }
    return { now, steps };
  }

  /**
   * A call of a single-policy limiter that takes no lease, at `now` (a reading of `clock`), on a subject
   * not yet encoded (encodeSubject), without the per-call objects of `consume`: the limiter's fast
   * path, which keeps the policy's `space` (spaceOf) so as not to look it up on every call. While every
   * key of the space is its own encoding (HeldKeys.foreign), a subject found there is its own key: one
   * lookup, no character read (reading them cost a quarter of a decision over many subjects).
   */
  decideSubject(
    policy: StorePolicy,
    space: KeySpace,
    subject: string,
    cost: number,
    mode: StoreCall['mode'],
    now: number,
  ): PolicyOutcome {
    let key = '';
    // A global policy's key is '' whatever the subject. Encoded all the same, a subject encodeSubject
    // cannot take is refused here, as on every other path, not when a refund encodes it.
    if (policy.scope === 'global') encodeSubject(subject);
    else key = space.foreign === 0 ? subject : encodeSubject(subject);
    const slot = this.read(space, key, now);
    // Not held as itself, nor by its encoding: an escape or a digest held would be counted in foreign.
    if (slot === undefined && key === subject) key = encodeSubject(subject);
    return this.decideOne(policy, space, key, slot, cost, 0, mode, now);
  }

  /**
   * A call of a single-policy limiter on `key`, whose live `slot` (read) is given. The all-or-nothing
   * rule is the policy's own step, except for a peek that would be allowed (reported as the state
   * stands, as decideAll does).
   */
  private decideOne(
    policy: StorePolicy,
    space: KeySpace,
    key: string,
    slot: Slot | undefined,
    cost: number,
    leaseId: number,
    mode: StoreCall['mode'],
    now: number,
  ): PolicyOutcome {
    if (slot !== undefined && policy.algorithm.record !== undefined)
      return this.decideInPlace(policy, space, key, slot, cost, leaseId, mode, now);
    const next = this.nexts[0]!;
    const result = policy.algorithm.step(slot, STATE, now, cost, policy.params, leaseId, next);
    if (!result.allowed) return result;
    if (mode === 'peek') return standing(policy, slot, STATE, now, leaseId, next);
    this.write(space, key, slot, next, result.expiresAt, now);
    return result;
  }

  /**
   * decideOne on a state its algorithm records in place (`record`): the step writes no next state, and
   * an allowed consume is recorded in the slot itself, so a call costs no copy of a state that grows
   * with the limit (a sliding log).
   */
  private decideInPlace(
    policy: StorePolicy,
    space: KeySpace,
    key: string,
    slot: Slot,
    cost: number,
    leaseId: number,
    mode: StoreCall['mode'],
    now: number,
  ): PolicyOutcome {
    const result = policy.algorithm.step(slot, STATE, now, cost, policy.params, leaseId, IN_PLACE);
    if (!result.allowed) return result;
    if (mode === 'peek') return standing(policy, slot, STATE, now, leaseId, IN_PLACE);
    this.record(policy, space, key, slot, cost, result.expiresAt, now);
    return result;
  }

  /** Records an allowed call in the slot itself (the algorithm's `record`), or in the larger slot it gives back. */
  private record(
    policy: StorePolicy,
    space: KeySpace,
    key: string,
    slot: Slot,
    cost: number,
    expiresAt: number,
    now: number,
  ): void {
    const held = policy.algorithm.record!(slot, STATE, now, cost, policy.params);
    held[EXPIRES_AT] = expiresAt;
    // The same key: the map keeps its place in the order of use.
    if (held !== slot) space.set(key, held);
  }

  refund(call: RefundCall): void {
    const now = this.clock();
    const { policies } = call.limiter;
    const spaces = this.spacesOf(call.limiter);
    for (let i = 0; i < policies.length; i++) {
      const policy = policies[i]!;
      const subject = policy.scope === 'global' ? '' : call.subject;
      const space = spaces[i]!;
      const slot = this.read(space, subject, now);
      if (slot === undefined || this.resetSince(policy, subject, call.charge.chargedAt, now)) continue;
      const state = slot.slice(STATE);
      const { next, expiresAt } = policy.algorithm.refund(state, now, call.charge, policy.params);
      // A decision only moves a key's expiry later; a refund may bring it sooner.
      if (expiresAt < this.earliestExpiry && expiresAt > now) this.earliestExpiry = expiresAt;
      this.write(space, subject, slot, next, expiresAt, now);
    }
  }

  reset(limiter: StoreLimiter, subject: string): void {
    const now = this.clock();
    for (const policy of limiter.policies) {
      if (policy.scope !== 'subject') continue;
      if (this.spaces.get(policy.namespace)?.delete(subject)) this.count--;
      // Marked, so that a refund of a charge made before gives nothing back (markOf).
      const marks = this.spaceOf(markOf(policy.namespace));
      this.write(marks, subject, this.read(marks, subject, now), [now], now + markLifeMs(policy.params), now);
    }
  }

  /**
   * Whether the subject was reset at or after `chargedAt` under `policy` (marksApply): a charge in the
   * reset's own millisecond counts as taken by it, made before or after.
   */
  private resetSince(policy: StorePolicy, subject: string, chargedAt: number, now: number): boolean {
    if (!marksApply(policy)) return false;
    const marks = this.spaces.get(markOf(policy.namespace));
    const mark = marks === undefined ? undefined : this.read(marks, subject, now);
    return mark !== undefined && mark[STATE]! >= chargedAt;
  }

  /** The keys of `namespace`, an empty space at first. */
  spaceOf(namespace: string): KeySpace {
    let space = this.spaces.get(namespace);
    if (space === undefined) {
      space = new HeldKeys<Slot>();
      this.spaces.set(namespace, space);
    }
    return space;
  }

  private spacesOf(limiter: StoreLimiter): KeySpace[] {
    let spaces = this.spacesByLimiter.get(limiter);
    if (spaces === undefined) {
      spaces = limiter.policies.map((p) => this.spaceOf(p.namespace));
      this.spacesByLimiter.set(limiter, spaces);
    }
    return spaces;
  }

  /** The live slot of a key, moved towards the young end if it has grown old; expired slots are dropped. */
  private read(space: KeySpace, subject: string, now: number): Slot | undefined {
    const slot = space.get(subject);
    if (slot === undefined) return undefined;
    if (slot[EXPIRES_AT]! <= now) return this.drop(space, subject);
    if (this.tick - slot[TOUCHED]! > this.moveAfter) this.touch(space, subject, slot);
    return slot;
  }

  // drop, touch and insert are apart from read and write, which every decision runs: a smaller common
  // path leaves more of V8's inlining budget (bytecode per optimized function) to the code around it.

  /** Forgets an expired key. */
  private drop(space: KeySpace, subject: string): undefined {
    space.delete(subject);
    this.count--;
    return undefined;
  }

  /** Moves a key to the young end of its map. */
  private touch(space: KeySpace, subject: string, slot: Slot): void {
    space.delete(subject);
    space.set(subject, slot);
    slot[TOUCHED] = ++this.tick;
  }

  private write(
    space: KeySpace,
    subject: string,
    slot: Slot | undefined,
    state: State | undefined,
    expiresAt: number,
    now: number,
  ): void {
    const size = state === undefined ? 0 : state.length;
    if (slot === undefined) this.insert(space, subject, state, expiresAt, now);
    else if (slot.length === STATE + size) {
      // Same shape (always, for fixed-size states): overwrite in place, no allocation.
      slot[EXPIRES_AT] = expiresAt;
      for (let i = 0; i < size; i++) slot[STATE + i] = state![i]!;
    } else space.set(subject, slotOf(expiresAt, slot[TOUCHED]!, state));
  }

  /** A new key, unless its state has already expired; makes room for it first. */
  private insert(
    space: KeySpace,
    subject: string,
    state: State | undefined,
    expiresAt: number,
    now: number,
  ): void {
    if (expiresAt <= now) return;
    if (expiresAt < this.earliestExpiry) this.earliestExpiry = expiresAt;
    this.sweepSome(now);
    if (this.count >= this.maxKeys) this.evict(now);
    space.set(subject, slotOf(expiresAt, ++this.tick, state));
    this.count++;
  }

  /** Looks at `steps` entries, round robin over namespaces, and drops the expired ones; true if it dropped any. */
  private sweepSome(now: number, steps = SWEEP_STEP): boolean {
    let dropped = false;
    for (let n = 0; n < steps; n++) {
      let entry = this.sweep?.next();
      if (entry === undefined || entry.done) {
        this.nextSweepSpace();
        entry = this.sweep?.next();
        if (entry === undefined || entry.done) return dropped;
      }
      const [subject, slot] = entry.value;
      if (slot[EXPIRES_AT]! <= now && this.sweepSpace!.delete(subject)) {
        this.count--;
        dropped = true;
      }
    }
    return dropped;
  }

  private nextSweepSpace(): void {
    const spaces = [...this.spaces.values()];
    const at = this.sweepSpace === undefined ? -1 : spaces.indexOf(this.sweepSpace);
    this.sweepSpace = spaces[(at + 1) % spaces.length];
    this.sweep = this.sweepSpace?.entries();
  }

  /**
   * Makes room for one key: expired ones if there are any (the sweep's next few entries, else every
   * key once some key may have expired), else the least recently used.
   */
  private evict(now: number): void {
    if (this.sweepSome(now, EVICT_SCAN)) return;
    if (now >= this.earliestExpiry && this.dropExpired(now)) return;
    let oldest: Cursor | undefined;
    let oldestSpace: KeySpace | undefined;
    for (const space of this.spaces.values()) {
      const cursor = this.oldestOf(space);
      if (cursor !== undefined && (oldest === undefined || cursor.touched < oldest.touched)) {
        oldest = cursor;
        oldestSpace = space;
      }
    }
    if (oldest !== undefined && oldestSpace!.delete(oldest.key!)) this.count--;
  }

  /**
   * Drops every expired key and learns when the next one expires; true if it dropped any. A full pass,
   * run only at capacity and only once some key may have expired, so a live counter is never evicted
   * while an expired one is held.
   */
  private dropExpired(now: number): boolean {
    let dropped = false;
    let earliest = Number.POSITIVE_INFINITY;
    for (const space of this.spaces.values()) {
      for (const [subject, slot] of space) {
        const expiresAt = slot[EXPIRES_AT]!;
        if (expiresAt > now) {
          if (expiresAt < earliest) earliest = expiresAt;
        } else if (space.delete(subject)) {
          this.count--;
          dropped = true;
        }
      }
    }
    this.earliestExpiry = earliest;
    return dropped;
  }

  /** The cursor of `space` on its least recently used entry; undefined when the space is empty. */
  private oldestOf(space: KeySpace): Cursor | undefined {
    let cursor = this.cursors.get(space);
    if (cursor === undefined) {
      cursor = { entries: space.entries(), key: undefined, touched: 0 };
      this.cursors.set(space, cursor);
    }
    // Entries behind the cursor were evicted, deleted or moved to the young end: the first live one
    // at or after it is the oldest. Ticks are unique, so a key holding the same tick is that entry.
    while (cursor.key === undefined || space.get(cursor.key)?.[TOUCHED] !== cursor.touched) {
      let entry = cursor.entries.next();
      if (entry.done) {
        if (space.size === 0) {
          cursor.key = undefined;
          return undefined;
        }
        cursor.entries = space.entries();
        entry = cursor.entries.next() as IteratorYieldResult<[string, Slot]>;
      }
      cursor.key = entry.value[0];
      cursor.touched = entry.value[1][TOUCHED]!;
    }
    return cursor;
  }
}

/** A slot of exactly the needed size (a push would reserve room for ~16 more numbers). */
function slotOf(expiresAt: number, touched: number, state: State | undefined): Slot {
  return state === undefined ? [expiresAt, touched] : [expiresAt, touched].concat(state);
}

import { type Algorithm, IN_PLACE, type State, sized, tooCostly } from '../algorithm.js';
import lua from './sliding-log.lua';

/**
 * State: [used, head, count, ring of entries (t, c)]: `count` entries in time order from ring index
 * `head` on, wrapping round the ring's end; `used` the sum of their costs. Each entry is stored once
 * with its cost (calls in the same millisecond share one entry). Every entry has cost >= 1, so a
 * subject never holds more than `limit` entries.
 *
 * A call drops the entries that have left the window from the front (moving `head`) and records
 * itself at the back: `record` does both in place, in a time that does not grow with the log, where
 * a copy of the log per call cost 200x more at limit 10,000 than at 10 (issue 32 target 4). The
 * `next` a step writes is the same log unrolled (head 0, a ring exactly as large as its entries); a
 * ring that `record` finds full is unrolled into one twice as large, up to `limit` entries, and one of
 * more than SHRINK_ABOVE entries three quarters empty into one twice as large as its entries.
 */
const HEADER = 3;
const USED = 0;
const HEAD = 1;
const COUNT = 2;
/** A ring of more entries than this is made smaller once three quarters of it are empty. */
const SHRINK_ABOVE = 64;

export const slidingLog: Algorithm = {
  name: 'sliding-log',
  code: 'sl',
  lua,
  step(slot, at, now, cost, { limit, windowMs }, _leaseId, next) {
    const ring = at + HEADER;
    let used = 0;
    let head = 0;
    let count = 0;
    let cap = 0;
    if (slot !== undefined) {
      used = slot[at + USED]!;
      head = slot[at + HEAD]!;
      count = slot[at + COUNT]!;
      cap = (slot.length - ring) / 2;
      // Entries at or before now - windowMs have left the window.
      const oldest = now - windowMs;
      while (count > 0 && slot[ring + 2 * head]! <= oldest) {
        used -= slot[ring + 2 * head + 1]!;
        head = head + 1 === cap ? 0 : head + 1;
        count--;
      }
    }
    const newest = count > 0 ? slot![ring + 2 * ((head + count - 1) % cap)]! : undefined;
    const resetMs = newest === undefined ? 0 : newest + windowMs - now;
    const expiresAt = newest === undefined ? now : newest + windowMs;
    if (cost > limit) return tooCostly(limit - used, resetMs, expiresAt);
    if (used + cost <= limit) {
      // cost 0 observes without recording (the uncharged view of a call that was not committed).
      if (cost === 0)
        return {
          allowed: true,
          remaining: limit - used,
          resetMs,
          retryAfterMs: 0,
          delayMs: 0,
          expiresAt,
        };
      if (next !== IN_PLACE) {
        const kept = newest === now ? count : count + 1;
        sized(next, HEADER + 2 * kept);
        next[USED] = used + cost;
        next[HEAD] = 0;
        next[COUNT] = kept;
        for (let k = 0, i = head; k < count; k++, i = i + 1 === cap ? 0 : i + 1) {
          next[HEADER + 2 * k] = slot![ring + 2 * i]!;
          next[HEADER + 2 * k + 1] = slot![ring + 2 * i + 1]!;
        }
        if (newest === now) next[HEADER + 2 * kept - 1]! += cost;
        else {
          next[HEADER + 2 * count] = now;
          next[HEADER + 2 * count + 1] = cost;
        }
      }
      return {
        allowed: true,
        remaining: limit - used - cost,
        resetMs: windowMs,
        retryAfterMs: 0,
        delayMs: 0,
        expiresAt: now + windowMs,
      };
    }
    // Wait until the oldest entries have left the window and freed enough.
    let freed = 0;
    let i = head;
    let last = i;
    while (used - freed + cost > limit) {
      freed += slot![ring + 2 * i + 1]!;
      last = i;
      i = i + 1 === cap ? 0 : i + 1;
    }
    return {
      allowed: false,
      remaining: limit - used,
      resetMs,
      retryAfterMs: slot![ring + 2 * last]! + windowMs - now,
      delayMs: 0,
      expiresAt,
    };
  },
  record(slot, at, now, cost, { limit, windowMs }) {
    const ring = at + HEADER;
    let used = slot[at + USED]!;
    let head = slot[at + HEAD]!;
    let count = slot[at + COUNT]!;
    const cap = (slot.length - ring) / 2;
    const oldest = now - windowMs;
    while (count > 0 && slot[ring + 2 * head]! <= oldest) {
      used -= slot[ring + 2 * head + 1]!;
      head = head + 1 === cap ? 0 : head + 1;
      count--;
    }
    slot[at + USED] = used + cost;
    if (count > 0) {
      const newest = ring + 2 * ((head + count - 1) % cap);
      if (slot[newest] === now) {
        slot[newest + 1]! += cost;
        slot[at + HEAD] = head;
        slot[at + COUNT] = count;
        return slot;
      }
    }
    const shrinks = cap > SHRINK_ABOVE && 4 * (count + 1) <= cap;
    if (count === cap || shrinks) {
      // Full: a ring twice as large, up to `limit` entries (an allowed call finds fewer: every entry
      // costs at least 1). Three quarters empty (a burst that has left): twice as large as its
      // entries, so that a key used now and then does not keep a burst's room for as long as it lives
      // (a copy of `count` entries, once at least as many have left). Unrolled (head 0) into an array
      // of exactly its size: made longer in place, V8 would reserve half as much again.
      const size = shrinks ? 2 * (count + 1) : Math.max(Math.min(2 * cap, limit), cap + 1);
      const end = head + count;
      const entries =
        end <= cap
          ? slot.slice(ring + 2 * head, ring + 2 * end)
          : slot.slice(ring + 2 * head).concat(slot.slice(ring, ring + 2 * (end - cap)));
      const moved = slot.slice(0, ring).concat(entries, new Array(2 * (size - count)).fill(0));
      moved[at + USED] = used + cost;
      moved[at + HEAD] = 0;
      moved[at + COUNT] = count + 1;
      moved[ring + 2 * count] = now;
      moved[ring + 2 * count + 1] = cost;
      return moved;
    }
    const tail = ring + 2 * ((head + count) % cap);
    slot[tail] = now;
    slot[tail + 1] = cost;
    slot[at + HEAD] = head;
    slot[at + COUNT] = count + 1;
    return slot;
  },
  refund(state, now, { cost, chargedAt }, { windowMs }) {
    if (state === undefined) return { next: state, expiresAt: now };
    // The log unrolled, the charged entry's cost given back (and the entry dropped once it holds none).
    const cap = (state.length - HEADER) / 2;
    const next: State = [0, 0, 0];
    let used = 0;
    let refunded = false;
    for (let k = 0, i = state[HEAD]!; k < state[COUNT]!; k++, i = i + 1 === cap ? 0 : i + 1) {
      const t = state[HEADER + 2 * i]!;
      let c = state[HEADER + 2 * i + 1]!;
      if (!refunded && t === chargedAt) {
        refunded = true;
        c -= cost;
        if (c <= 0) continue;
      }
      next.push(t, c);
      used += c;
    }
    next[USED] = used;
    next[COUNT] = (next.length - HEADER) / 2;
    return { next, expiresAt: next.length > HEADER ? next[next.length - 2]! + windowMs : now };
  },
};

import { algorithms, bucketAlgorithms } from '../../algorithms/index.js';
import { bytesOf, hex, sha1 } from '../../portable/sha.js';
import template from './script.lua';

/**
 * The one Lua script of the Redis store, assembled from the algorithms' Lua twins. One EVALSHA
 * decides a batch of calls of one limiter, each all-or-nothing by the rule of `decideAll`
 * (stores/store.ts) and each seeing what the calls before it wrote, or gives a charge back, or forgets
 * a subject. Under Redis TIME the window algorithms keep a state in one integer, which Redis holds in
 * the key's object alone and can add to in place; other states are MessagePack arrays (cmsgpack keeps
 * integers exact and small), but for a twin that reads and writes its key itself, a few bytes of it a
 * call (the sliding log above a small limit: a ring updated with GETRANGE and SETRANGE, so a call's
 * cost does not grow with the limit). Every key written gets a TTL from the step's expiresAt.
 *
 * Redis runs the whole script body on every call, so it is written for that: TIME once per batch, the
 * policies parsed once per batch, no per-call arguments for the commonest calls, and no Redis command
 * but one MGET per batch and one write (SET, INCRBY or DEL) per key charged (a twin that reads its
 * key itself: its few reads and writes per call). Replacing a TTL costs
 * Redis twice what the rest of a SET does, so a write keeps the key's TTL (KEEPTTL, Redis 6.0) when the
 * twin says the stored state's expiry already covers the next state's: under Redis TIME every write
 * gives a key at least its state's expiresAt, so a window algorithm rewrites a TTL once per window and
 * key.
 */

/** What the script does with the keys. */
export const Op = { batch: 'b', refund: 'r', reset: 'd' } as const;
export type Op = (typeof Op)[keyof typeof Op];

/** How the script reports a retry that never comes (Lua returns integers only). */
export const NEVER = -1;
/**
 * How much longer keys live in Redis under a caller's clock than that clock says they matter. A stale
 * state decides like no state, so a longer life changes no decision; an early expiry, under a manual
 * clock that stands still while Redis's runs, would.
 */
export const CLOCK_GRACE_MS = 60_000;
/** Reply fields per policy: allowed (1/0), remaining, resetMs, retryAfterMs, delayMs. */
export const REPLY_FIELDS = 5;

/** Codes of the algorithms whose policies pass `burst` (the others' capacity is their limit). */
const burstCodes = new Set(
  Object.values(algorithms)
    .filter((a) => bucketAlgorithms.has(a.name))
    .map((a) => a.code),
);

/** Whether a policy of this algorithm passes its burst to the script after its window. */
export function takesBurst(code: string): boolean {
  return burstCodes.has(code);
}

/** Twins by source: token-bucket and leaky-bucket share gcra's. */
function twinsBySource(): Map<string, string[]> {
  const codesBySource = new Map<string, string[]>();
  for (const algorithm of Object.values(algorithms)) {
    const codes = codesBySource.get(algorithm.lua) ?? [];
    codes.push(algorithm.code);
    codesBySource.set(algorithm.lua, codes);
  }
  return codesBySource;
}

/**
 * One branch per distinct Lua twin, the twin's chunk inlined as the branch's block: its locals are the
 * branch's, it sees the policy's `limit`, and its closing `return step, refund[, expiresAtOf, …]`
 * returns from twinOf.
 */
function twinLoaders(): string {
  const branches = [...twinsBySource()].map(([source, codes], i) => {
    const test = codes.map((code) => `code == '${code}'`).join(' or ');
    return `${i === 0 ? 'if' : 'elseif'} ${test} then
${source.trimEnd()}
  `;
  });
  return `${branches.join('')}end
  return error('sluice: unknown algorithm ' .. tostring(code))`;
}

/** A Lua test of whether the policy of algorithm `code` passes a burst. */
function burstTest(code: string): string {
  return `(${[...burstCodes].map((c) => `${code} == '${c}'`).join(' or ')})`;
}

/** The script: its template (script.lua, whose header documents KEYS, ARGV and the reply) filled in. */
export const script = template
  .replace('{{clockGraceMs}}', String(CLOCK_GRACE_MS))
  .replace('{{twins}}', () => twinLoaders())
  .replace('{{burstTest}}', burstTest('code'))
  .replaceAll('{{replyFields}}', String(REPLY_FIELDS));

/** The SHA1 that EVALSHA names the script by. */
export const scriptSha = hex(sha1(bytesOf(script)));

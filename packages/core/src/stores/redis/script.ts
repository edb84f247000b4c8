import { createHash } from 'node:crypto';
import { algorithms, bucketAlgorithms } from '../../algorithms/index.js';

/**
 * The one Lua script of the Redis store, assembled from the algorithms' Lua twins. One EVALSHA
 * decides a whole call of a limiter all-or-nothing by the rule of `decideAll` (stores/store.ts), or
 * gives a charge back, or forgets a subject. States are MessagePack arrays (cmsgpack keeps integers
 * exact and small: a sliding-window state takes 8 to 12 bytes); every key written gets a TTL from the
 * step's expiresAt.
 *
 * Redis runs the whole script body on every call, so it is written for that: no work that a call does
 * not need (only the twins it names are loaded, numbers are parsed once, the usual cost of 1 is not
 * parsed at all, no argument is sent that the call does not use), a path of its own for the commonest
 * call (one policy, consume) that allocates no table but the state, the next state and the reply, and
 * no Redis command but TIME once, then GET and SET (or DEL) per key. Replacing a TTL costs Redis twice
 * what the rest of a SET does, so a write keeps the key's TTL (KEEPTTL, Redis 6.0) when the twin says
 * the stored state's expiry already covers the next state's: under Redis TIME every write gives a key
 * at least its state's expiresAt, so a window algorithm rewrites a TTL once per window and key.
 */

/** What the script does with the keys. */
export const Op = { consume: 'c', peek: 'p', refund: 'r', reset: 'd' } as const;
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
 * branch's and its closing `return step, refund[, expiresAtOf]` returns from twinOf.
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

/**
 * Lua that writes `state` to `key` with a TTL, or keeps the key's TTL when `kept` (until when the key
 * surely lives, -1 when unknown) covers `expiresAt`; a state that already means nothing is deleted, so
 * no key lives forever. Emitted twice: inline in the one-policy path, and as save().
 */
function writeState(key: string, state: string, expiresAt: string, kept: string, indent: string): string {
  return `local life = ${expiresAt} - now
if life <= 0 then
  call('DEL', ${key})
elseif ${kept} >= ${expiresAt} then
  call('SET', ${key}, encode(${state}), 'KEEPTTL')
else
  call('SET', ${key}, encode(${state}), 'PX', life + slack)
end`.replaceAll('\n', `\n${indent}`);
}

/**
 * Lua for until when a key surely lives: under Redis TIME, the expiresAt of the state it holds when its
 * twin tells it (every write gave the key at least that: see writeState and slack); else -1. Under a
 * caller's clock the key's TTL runs on Redis's clock instead, so it is always rewritten.
 */
function keptUntil(expiresAtOf: string, state: string, windowMs: string): string {
  return `(slack == 1 and ${state} ~= nil and ${expiresAtOf} ~= nil) and ${expiresAtOf}(${state}, ${windowMs}) or -1`;
}

/**
 * Lua that sets now (ms) from the caller's clock, the argument after the lease id and chargedAt (at
 * `at` and `at + 1`), or from Redis TIME; and slack, how much longer than its state matters a key
 * lives: 1 ms under Redis TIME (Redis may time a key's expiry 1 ms behind TIME), and longer under a
 * caller's clock, which may stand still while Redis's runs (a manual clock in tests). Emitted in each
 * path once the policies' arguments say where the trailing ones start.
 */
function readClock(at: string, indent: string): string {
  return `local given = argv[${at} + 2]
if given == nil then
  local time = call('TIME')
  now = time[1] * 1000 + math.floor(time[2] / 1000)
  slack = 1
else
  now = given + 0
  slack = ${CLOCK_GRACE_MS}
end`.replaceAll('\n', `\n${indent}`);
}

/** Policies whose reply fields the general path's reply table has room for before it grows. */
const PRESIZED_POLICIES = 4;

export const script = `-- Sluice: one call of a limiter, decided in one round trip (stores/redis/script.ts).
-- KEYS[i]: the state of policy i, in the limiter's order; every key in one cluster slot.
-- ARGV: op, cost, then per policy its algorithm code, limit, windowMs and, for the bucket algorithms,
-- burst; then, each only when it or a later one is given: the call's lease id (0: none), chargedAt
-- (refund) and the caller's clock (now in ms; without it, Redis TIME).
-- Reply (consume, peek): { now, per policy: allowed (1/0), remaining, resetMs, retryAfterMs (-1: never), delayMs }
-- Numbers are parsed as \`s + 0\`, which converts once where tonumber converts twice.
local call = redis.call
local keys, argv = KEYS, ARGV
local n = #keys
local op = argv[1] -- 'c' consume, 'p' peek, 'r' refund, 'd' delete the keys (reset)

if op == 'd' then
  call('DEL', unpack(keys))
  return 0
end

local cost = argv[2]
if cost == '1' then cost = 1 else cost = cost + 0 end
local encode = cmsgpack.pack
local decode = cmsgpack.unpack

-- now in ms, and how much longer than its state matters a key lives (see readClock in script.ts).
local now, slack

-- The twin of an algorithm code: step, refund, and expiresAtOf for the twins whose keys keep their
-- expiry for a whole window (else nil).
local function twinOf(code)
  ${twinLoaders()}
end

-- The commonest call, one policy consumed: no table but the state, the next state and the reply.
if n == 1 and op == 'c' then
  local key = keys[1]
  local code = argv[3]
  local step, _, expiresAtOf = twinOf(code)
  local limit = argv[4] + 0
  local windowMs = argv[5] + 0
  local burst = limit
  local at = 6
  if ${burstTest('code')} then
    burst = argv[6] + 0
    at = 7
  end
  local leaseId = argv[at]
  if leaseId == nil then leaseId = 0 else leaseId = leaseId + 0 end
  ${readClock('at', '  ')}
  local state = nil
  local raw = call('GET', key)
  if raw then state = decode(raw) end
  local ok, next, remaining, resetMs, retryAfterMs, delayMs, expiresAt =
    step(state, now, cost, limit, windowMs, burst, leaseId)
  if ok then
    local kept = ${keptUntil('expiresAtOf', 'state', 'windowMs')}
    ${writeState('key', 'next', 'expiresAt', 'kept', '    ')}
  end
  if retryAfterMs == math.huge then retryAfterMs = -1 end
  return { now, ok and 1 or 0, remaining, resetMs, retryAfterMs, delayMs }
end

local function save(key, state, expiresAt, kept)
  ${writeState('key', 'state', 'expiresAt', 'kept', '  ')}
end

-- Per policy (the list presized for four), one table presized by its constructor: { step, refund,
-- limit, windowMs, burst, expiresAtOf, state, next, expiresAt } (state nil when the key holds none;
-- next and expiresAt after the step).
local policies = { false, false, false, false }
local at = 3
for i = 1, n do
  local code = argv[at]
  local step, refund, expiresAtOf = twinOf(code)
  local limit = argv[at + 1] + 0
  local windowMs = argv[at + 2] + 0
  local burst = limit
  if ${burstTest('code')} then
    burst = argv[at + 3] + 0
    at = at + 4
  else
    at = at + 3
  end
  local state = nil
  local raw = call('GET', keys[i])
  if raw then state = decode(raw) end
  policies[i] = { step, refund, limit, windowMs, burst, expiresAtOf, state, false, 0 }
end
local leaseId = argv[at]
if leaseId == nil then leaseId = 0 else leaseId = leaseId + 0 end
${readClock('at', '')}

if op == 'r' then
  -- Only keys that hold a state: nothing was charged where there is none.
  local chargedAt = argv[at + 1] + 0
  for i = 1, n do
    local p = policies[i]
    if p[7] ~= nil then
      local next, expiresAt = p[2](p[7], now, cost, chargedAt, leaseId, p[3], p[4], p[5])
      save(keys[i], next, expiresAt, ${keptUntil('p[6]', 'p[7]', 'p[4]')})
    end
  end
  return 0
end

-- Presized for ${PRESIZED_POLICIES} policies; Redis reads a reply table up to its first nil.
local reply = { now${', 0'.repeat(REPLY_FIELDS * PRESIZED_POLICIES)} }
reply[2 + ${REPLY_FIELDS} * n] = nil
local allowed = true
for i = 1, n do
  local p = policies[i]
  local ok, next, remaining, resetMs, retryAfterMs, delayMs, expiresAt =
    p[1](p[7], now, cost, p[3], p[4], p[5], leaseId)
  if not ok then allowed = false end
  if retryAfterMs == math.huge then retryAfterMs = -1 end
  p[8] = next
  p[9] = expiresAt
  local r = 2 + ${REPLY_FIELDS} * (i - 1)
  reply[r] = ok and 1 or 0
  reply[r + 1] = remaining
  reply[r + 2] = resetMs
  reply[r + 3] = retryAfterMs
  reply[r + 4] = delayMs
end

if allowed and op == 'c' then
  for i = 1, n do
    local p = policies[i]
    save(keys[i], p[8], p[9], ${keptUntil('p[6]', 'p[7]', 'p[4]')})
  end
  return reply
end

-- Nothing is charged: a policy that would have allowed reports its state as it stands.
for i = 1, n do
  local r = 2 + ${REPLY_FIELDS} * (i - 1)
  if reply[r] == 1 then
    local p = policies[i]
    local _, _, remaining, resetMs, _, delayMs = p[1](p[7], now, 0, p[3], p[4], p[5], leaseId)
    reply[r + 1] = remaining
    reply[r + 2] = resetMs
    reply[r + 3] = 0
    reply[r + 4] = delayMs
  end
end
return reply
`;

/** The SHA1 that EVALSHA names the script by. */
export const scriptSha = createHash('sha1').update(script).digest('hex');

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
 * parsed at all), a path of its own for the commonest call (one policy, consume) that allocates no
 * table but the state, the next state and the reply, and four Redis commands at most per key: TIME
 * once, GET, PTTL for the twins whose keys keep their expiry for a whole window, and one SET, which
 * keeps the key's TTL (KEEPTTL, Redis 6.0) when it already lasts long enough, since replacing a TTL
 * costs Redis more than reading it.
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

/** One branch per distinct Lua twin (token-bucket and leaky-bucket share gcra's), run on demand. */
function twinLoaders(): string {
  const codesBySource = new Map<string, string[]>();
  for (const algorithm of Object.values(algorithms)) {
    const codes = codesBySource.get(algorithm.lua) ?? [];
    codes.push(algorithm.code);
    codesBySource.set(algorithm.lua, codes);
  }
  const branches = [...codesBySource].map(([source, codes], i) => {
    const test = codes.map((code) => `code == '${code}'`).join(' or ');
    // A twin's algorithms all take a burst or none do (gcra's are the bucket algorithms).
    return `${i === 0 ? 'if' : 'elseif'} ${test} then
    local step, refund, windowed = (function()
${source.trimEnd()}
    end)()
    return step, refund, windowed, ${takesBurst(codes[0]!)}
  `;
  });
  return `${branches.join('')}end
  return error('sluice: unknown algorithm ' .. tostring(code))`;
}

export const script = `-- Sluice: one call of a limiter, decided in one round trip (stores/redis/script.ts).
-- KEYS[i]: the state of policy i, in the limiter's order; every key in one cluster slot.
-- ARGV: op, clock, cost, then per policy its algorithm code, limit, windowMs and, for the bucket
-- algorithms, burst; then the call's lease id (omitted when 0) and, for a refund, chargedAt.
-- Reply (consume, peek): { now, per policy: allowed (1/0), remaining, resetMs, retryAfterMs (-1: never), delayMs }
local call = redis.call
local tonumber = tonumber
local keys, argv = KEYS, ARGV
local n = #keys
local op = argv[1] -- 'c' consume, 'p' peek, 'r' refund, 'd' delete the keys (reset)

if op == 'd' then
  call('DEL', unpack(keys))
  return 0
end

-- now in ms, from the caller's clock or Redis TIME. A key lives \`slack\` ms longer than its state
-- matters: 1 ms under Redis TIME (Redis may time the key's expiry 1 ms behind TIME), and longer under
-- a caller's clock, which may stand still while Redis's runs (a manual clock in tests).
local now, slack
if argv[2] == '' then
  local time = call('TIME')
  now = time[1] * 1000 + math.floor(time[2] / 1000)
  slack = 1
else
  now = tonumber(argv[2])
  slack = ${CLOCK_GRACE_MS}
end
local cost = argv[3]
if cost == '1' then cost = 1 else cost = tonumber(cost) end
local encode = cmsgpack.pack
local decode = cmsgpack.unpack

-- The twin of an algorithm code: step, refund, whether its keys keep their expiry for a whole window,
-- and whether its policies pass a burst.
local function twinOf(code)
  ${twinLoaders()}
end

-- Writes a state. ttl is the key's PTTL when it was read (else below any life): a key that already
-- lives long enough keeps its TTL. A state that already means nothing is deleted: no key lives forever.
local function save(key, state, expiresAt, ttl)
  local life = expiresAt - now
  if life <= 0 then
    call('DEL', key)
    return
  end
  life = life + slack
  if ttl >= life then
    call('SET', key, encode(state), 'KEEPTTL')
  else
    call('SET', key, encode(state), 'PX', life)
  end
end

-- The commonest call, one policy consumed, without the tables of the general path below.
if n == 1 and op == 'c' then
  local key = keys[1]
  local step, _, windowed, withBurst = twinOf(argv[4])
  local limit = tonumber(argv[5])
  local windowMs = tonumber(argv[6])
  local burst = limit
  local tail = 7
  if withBurst then
    burst = tonumber(argv[7])
    tail = 8
  end
  local state = nil
  local ttl = -3
  local raw = call('GET', key)
  if raw then
    state = decode(raw)
    if windowed then ttl = call('PTTL', key) end
  end
  local ok, next, remaining, resetMs, retryAfterMs, delayMs, expiresAt =
    step(state, now, cost, limit, windowMs, burst, tonumber(argv[tail]) or 0)
  if ok then save(key, next, expiresAt, ttl) end
  if retryAfterMs == math.huge then retryAfterMs = -1 end
  return { now, ok and 1 or 0, remaining, resetMs, retryAfterMs, delayMs }
end

-- One table per policy: its twin, numbers, stored state (nil when none) and the key's TTL if read.
local policies = {}
local at = 4
for i = 1, n do
  local step, refund, windowed, withBurst = twinOf(argv[at])
  local limit = tonumber(argv[at + 1])
  local p = {
    step = step, refund = refund, limit = limit, windowMs = tonumber(argv[at + 2]), burst = limit,
    state = nil, ttl = -3, next = nil, expiresAt = 0,
  }
  if withBurst then
    p.burst = tonumber(argv[at + 3])
    at = at + 4
  else
    at = at + 3
  end
  local raw = call('GET', keys[i])
  if raw then
    p.state = decode(raw)
    if windowed then p.ttl = call('PTTL', keys[i]) end
  end
  policies[i] = p
end
local leaseId = tonumber(argv[at]) or 0

if op == 'r' then
  -- Only keys that hold a state: nothing was charged where there is none.
  local chargedAt = tonumber(argv[at + 1])
  for i = 1, n do
    local p = policies[i]
    if p.state ~= nil then
      local next, expiresAt = p.refund(p.state, now, cost, chargedAt, leaseId, p.limit, p.windowMs, p.burst)
      save(keys[i], next, expiresAt, p.ttl)
    end
  end
  return 0
end

local reply = { now }
local allowed = true
for i = 1, n do
  local p = policies[i]
  local ok, next, remaining, resetMs, retryAfterMs, delayMs, expiresAt =
    p.step(p.state, now, cost, p.limit, p.windowMs, p.burst, leaseId)
  if not ok then allowed = false end
  if retryAfterMs == math.huge then retryAfterMs = -1 end
  p.next = next
  p.expiresAt = expiresAt
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
    save(keys[i], p.next, p.expiresAt, p.ttl)
  end
  return reply
end

-- Nothing is charged: a policy that would have allowed reports its state as it stands.
for i = 1, n do
  local r = 2 + ${REPLY_FIELDS} * (i - 1)
  if reply[r] == 1 then
    local p = policies[i]
    local _, _, remaining, resetMs, _, delayMs = p.step(p.state, now, 0, p.limit, p.windowMs, p.burst, leaseId)
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

import { createHash } from 'node:crypto';
import { algorithms } from '../../algorithms/index.js';

/**
 * The one Lua script of the Redis store, assembled from the algorithms' Lua twins. One EVALSHA
 * decides a whole call of a limiter all-or-nothing by the rule of `decideAll` (stores/store.ts), or
 * gives a charge back, or forgets a subject. States are MessagePack arrays (cmsgpack keeps integers
 * exact and small); every key written gets a TTL from the step's expiresAt.
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

/** One loader per distinct Lua twin (token-bucket and leaky-bucket share gcra's), built on first use. */
function twinLoaders(): string {
  const codesBySource = new Map<string, string[]>();
  for (const algorithm of Object.values(algorithms)) {
    const codes = codesBySource.get(algorithm.lua) ?? [];
    codes.push(algorithm.code);
    codesBySource.set(algorithm.lua, codes);
  }
  const branches = [...codesBySource].map(([source, codes], i) => {
    const test = codes.map((code) => `code == '${code}'`).join(' or ');
    return `${i === 0 ? 'if' : 'elseif'} ${test} then
      twin = (function()
${source.trimEnd()}
      end)()
    `;
  });
  return `${branches.join('')}else
      return error('sluice: unknown algorithm ' .. tostring(code))
    end`;
}

export const script = `-- Sluice: one call of a limiter, decided in one round trip (stores/redis/script.ts).
-- KEYS[i]: the state of policy i, in the limiter's order; every key in one cluster slot.
local op = ARGV[1] -- 'c' consume, 'p' peek, 'r' refund, 'd' delete the keys (reset)
local clock = ARGV[2] -- now in ms from the caller's clock, or '' to read Redis TIME
local cost = tonumber(ARGV[3]) -- units of the call; for a refund, the units charged
local leaseId = tonumber(ARGV[4]) -- the call's concurrency lease (0 when none)
local chargedAt = tonumber(ARGV[5]) -- refund: the now of the charged call
local POLICY_ARGS = 6 -- ARGV[6 + 4 * (i - 1)]..: policy i's algorithm code, limit, windowMs, burst
-- Reply (consume, peek): { now, per policy: allowed (1/0), remaining, resetMs, retryAfterMs (-1: never), delayMs }
local call = redis.call
local encode = cmsgpack.pack
local decode = cmsgpack.unpack

if op == 'd' then
  if #KEYS > 0 then call('DEL', unpack(KEYS)) end
  return 0
end

local now
-- Keys expire by Redis's clock: under a caller's clock (which may stand still, a manual clock in
-- tests) they are kept this much longer than that clock says they matter.
local grace = 0
if clock == '' then
  local time = call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(clock)
  grace = ${CLOCK_GRACE_MS}
end

local twins = {}
local function twinOf(code)
  local twin = twins[code]
  if twin == nil then
    ${twinLoaders()}
    twins[code] = twin
  end
  return twin
end

-- Writes a state with its TTL; a state that already means nothing is deleted: no key lives forever.
local function save(key, state, expiresAt)
  local ttl = expiresAt - now
  if ttl > 0 then
    call('SET', key, encode(state), 'PX', string.format('%d', ttl + grace))
  else
    call('DEL', key)
  end
end

local n = #KEYS
-- One table per policy: its twin, numbers and stored state (nil when it has none).
local policies = {}
for i = 1, n do
  local at = POLICY_ARGS + 4 * (i - 1)
  local raw = call('GET', KEYS[i])
  policies[i] = {
    twin = twinOf(ARGV[at]),
    limit = tonumber(ARGV[at + 1]),
    windowMs = tonumber(ARGV[at + 2]),
    burst = tonumber(ARGV[at + 3]),
    state = raw and decode(raw) or nil,
  }
end

if op == 'r' then
  -- Only keys that hold a state: nothing was charged where there is none.
  for i = 1, n do
    local p = policies[i]
    if p.state ~= nil then
      local next, expiresAt = p.twin.refund(p.state, now, cost, chargedAt, leaseId, p.limit, p.windowMs, p.burst)
      save(KEYS[i], next, expiresAt)
    end
  end
  return 0
end

local reply = { now }
local allowed = true
for i = 1, n do
  local p = policies[i]
  local ok, next, remaining, resetMs, retryAfterMs, delayMs, expiresAt =
    p.twin.step(p.state, now, cost, p.limit, p.windowMs, p.burst, leaseId)
  if not ok then allowed = false end
  if retryAfterMs == math.huge then retryAfterMs = -1 end
  p.next = next
  p.expiresAt = expiresAt
  local at = 2 + ${REPLY_FIELDS} * (i - 1)
  reply[at] = ok and 1 or 0
  reply[at + 1] = remaining
  reply[at + 2] = resetMs
  reply[at + 3] = retryAfterMs
  reply[at + 4] = delayMs
end

if allowed and op == 'c' then
  for i = 1, n do save(KEYS[i], policies[i].next, policies[i].expiresAt) end
  return reply
end

-- Nothing is charged: a policy that would have allowed reports its state as it stands.
for i = 1, n do
  local at = 2 + ${REPLY_FIELDS} * (i - 1)
  if reply[at] == 1 then
    local p = policies[i]
    local _, _, remaining, resetMs, _, delayMs = p.twin.step(p.state, now, 0, p.limit, p.windowMs, p.burst, leaseId)
    reply[at + 1] = remaining
    reply[at + 2] = resetMs
    reply[at + 3] = 0
    reply[at + 4] = delayMs
  end
end
return reply
`;

/** The SHA1 that EVALSHA names the script by. */
export const scriptSha = createHash('sha1').update(script).digest('hex');

/** Script arguments between the keys and the policies: op, clock, cost, leaseId, chargedAt. */
export const CALL_ARGS = 5;

-- Lua twin of fixed-window.ts: the same integer arithmetic, in the same order.
-- The Redis script (stores/redis/script.ts) runs this chunk and calls step and refund with:
--   state      the stored { windowIndex, count }, or nil
--   now        ms; cost: units of the call (0 observes); limit, windowMs: the policy's numbers
-- step returns allowed, next, remaining, resetMs, retryAfterMs (math.huge: never), delayMs, expiresAt;
-- refund returns next, expiresAt. The chunk returns step, refund, expiresAtOf(state, windowMs): the
-- expiresAt that step and refund give every state they write, which moves only when a window starts
-- (the store keeps a key's TTL while the stored state's expiresAt covers the next one), and toInteger
-- and fromInteger, which keep a state in one integer under Redis TIME, and stepInteger, step on that
-- integer (the store's load, save and decode are nil).
local floor = math.floor
local max = math.max

-- The decision on the count of the window of index: allowed, remaining, resetMs, retryAfterMs
-- (math.huge: never), delayMs, expiresAt. step and stepInteger decide here.
local function decide(index, count, now, cost, limit, windowMs)
  local finish = (index + 1) * windowMs
  local resetMs = finish - now
  if cost > limit then return false, limit - count, resetMs, math.huge, 0, finish end
  if count + cost > limit then
    -- The next window starts empty, and cost <= limit fits there.
    return false, limit - count, resetMs, resetMs, 0, finish
  end
  return true, limit - count - cost, resetMs, 0, 0, finish
end

local function step(state, now, cost, limit, windowMs)
  local index = floor(now / windowMs)
  local count = 0
  if state ~= nil and state[1] == index then count = state[2] end
  local ok, remaining, resetMs, retryAfterMs, delayMs, expiresAt = decide(index, count, now, cost, limit, windowMs)
  local next = state
  if ok then next = { index, count + cost } end
  return ok, next, remaining, resetMs, retryAfterMs, delayMs, expiresAt
end

local function refund(state, now, cost, chargedAt, leaseId, limit, windowMs)
  local index = floor(chargedAt / windowMs)
  if state == nil or state[1] ~= index then
    return state, (state ~= nil and state[1] or 0) * windowMs + windowMs
  end
  return { index, max(0, state[2] - cost) }, (index + 1) * windowMs
end

-- A stored state matters until its window ends.
local function expiresAtOf(state, windowMs)
  return (state[1] + 1) * windowMs
end

-- Counts up to 2^48 - 1 fit one integer beside the window index modulo 4: under Redis TIME a key
-- lives until 1 ms after its state's window ends, so a state read is from the current window or (in
-- that last ms) the one before, and the index modulo 4 tells which. The index takes the low two bits:
-- a count below 2,500 then makes an integer below 10,000, one Redis shares, which costs no object.
local COUNT = 281474976710656

-- The state as one integer below 2^50 (exact in a double), or nil when the count does not fit.
local function toInteger(state)
  if state[2] >= COUNT then return nil end
  return state[2] * 4 + state[1] % 4
end

local function fromInteger(packed, now, windowMs)
  local low = packed % 4
  local index = floor(now / windowMs)
  return { index - (index - low) % 4, (packed - low) / 4 }
end

-- step(fromInteger(packed, now, windowMs), now, cost, limit, windowMs) on the integer itself (nil: no
-- state), for the store's commonest batch: no table a call. Returns allowed, toInteger of the state
-- charged (nil when refused, or when the count does not fit: the store then steps the tables),
-- remaining, resetMs, retryAfterMs, delayMs, expiresAt, then expiresAtOf of the state read (-1: none).
-- It unpacks and packs inline, as fromInteger and toInteger do: a Lua function call a decision on
-- this path gave 4% more script time in five alternating runs of `node bench/suites/redis.mjs --many`.
local function stepInteger(packed, now, cost, limit, windowMs)
  local index = floor(now / windowMs)
  local count = 0
  local kept = -1
  if packed ~= nil then
    local low = packed % 4
    local stored = index - (index - low) % 4
    if stored == index then count = (packed - low) / 4 end
    kept = (stored + 1) * windowMs
  end
  local ok, remaining, resetMs, retryAfterMs, delayMs, expiresAt = decide(index, count, now, cost, limit, windowMs)
  local value = nil
  if ok and count + cost < COUNT then value = (count + cost) * 4 + index % 4 end
  return ok, value, remaining, resetMs, retryAfterMs, delayMs, expiresAt, kept
end

return step, refund, expiresAtOf, toInteger, fromInteger, nil, nil, nil, stepInteger

-- Lua twin of sliding-window.ts: the same integer arithmetic, in the same order.
-- The Redis script (stores/redis/script.ts) runs this chunk and calls step and refund with:
--   state      the stored { windowIndex, current, previous }, or nil
--   now        ms; cost: units of the call (0 observes); limit, w: the policy's limit and windowMs
-- step returns allowed, next, remaining, resetMs, retryAfterMs (math.huge: never), delayMs, expiresAt;
-- refund returns next, expiresAt. The chunk returns step, refund, expiresAtOf(state, windowMs): the
-- expiresAt that step and refund give every state they write, which moves only when a window starts
-- (the store keeps a key's TTL while the stored state's expiresAt covers the next one), and toInteger
-- and fromInteger, which keep a state in one integer under Redis TIME, and stepInteger, step on that
-- integer (the store's load, save and decode are nil).
local floor = math.floor
local max = math.max

-- The decision on the counts of the window of index (curr) and of the one before (prev): allowed,
-- remaining, resetMs, retryAfterMs (math.huge: never), delayMs, expiresAt. step and stepInteger
-- decide here.
local function decide(index, curr, prev, now, cost, limit, w)
  local start = index * w
  local finish = start + w
  local resetMs = finish - now
  -- The estimate times W: prev * (W - elapsed) + curr * W.
  local scaled = prev * (finish - now) + curr * w
  if cost > limit then
    return false, max(0, floor((limit * w - scaled) / w)), resetMs, math.huge, 0, finish + w
  end
  if scaled + cost * w <= limit * w then
    return true, max(0, floor((limit * w - scaled - cost * w) / w)), resetMs, 0, 0, finish + w
  end
  local at
  local room = (limit - curr - cost) * w
  if room >= 0 then
    -- Denied with room left means prev > 0: wait until enough of it has slid out of the window.
    at = finish - floor(room / prev)
  else
    -- curr + cost > limit: in the next window curr becomes the previous count and slides out in turn.
    at = finish + w - floor((limit - cost) * w / curr)
  end
  return false, max(0, floor((limit * w - scaled) / w)), resetMs, at - now, 0, finish + w
end

local function step(state, now, cost, limit, w)
  local index = floor(now / w)
  local curr = 0
  local prev = 0
  if state ~= nil then
    if state[1] == index then
      curr = state[2]
      prev = state[3]
    elseif state[1] == index - 1 then
      prev = state[2]
    end
  end
  local ok, remaining, resetMs, retryAfterMs, delayMs, expiresAt = decide(index, curr, prev, now, cost, limit, w)
  local next = state
  if ok then next = { index, curr + cost, prev } end
  return ok, next, remaining, resetMs, retryAfterMs, delayMs, expiresAt
end

local function refund(state, now, cost, chargedAt, leaseId, limit, w)
  if state == nil then return nil, 0 end
  local index = floor(chargedAt / w)
  local expiresAt = (state[1] + 2) * w
  if state[1] == index then return { index, max(0, state[2] - cost), state[3] }, expiresAt end
  if state[1] == index + 1 then return { state[1], state[2], max(0, state[3] - cost) }, expiresAt end
  return state, expiresAt
end

-- A stored state matters until the end of the window after its own.
local function expiresAtOf(state, w)
  return (state[1] + 2) * w
end

-- Counts up to 2^24 - 1 fit one integer beside the window index modulo 4: under Redis TIME a key
-- lives until 1 ms after the end of the window after its state's, so a state read is from the current
-- window, the one before, or (in that last ms) the one before that, and the index modulo 4 tells which.
-- The index takes the low two bits: a subject new in its window (no previous count, fewer than 2,500
-- in the current one) is then below 10,000, one of the integers Redis shares, which costs no object.
local COUNT = 16777216

-- The state as one integer below 2^50 (exact in a double), or nil when a count does not fit.
local function toInteger(state)
  if state[2] >= COUNT or state[3] >= COUNT then return nil end
  return (state[3] * COUNT + state[2]) * 4 + state[1] % 4
end

local function fromInteger(packed, now, w)
  local low = packed % 4
  local counts = (packed - low) / 4
  local index = floor(now / w)
  return { index - (index - low) % 4, counts % COUNT, floor(counts / COUNT) }
end

-- step(fromInteger(packed, now, w), now, cost, limit, w) on the integer itself (nil: no state), for
-- the store's commonest batch: no table a call. Returns allowed, toInteger of the state charged (nil
-- when refused, or when a count does not fit: the store then steps the tables), remaining, resetMs,
-- retryAfterMs, delayMs, expiresAt, then expiresAtOf of the state read (-1: none).
-- It unpacks and packs inline, as fromInteger and toInteger do: a Lua function call a decision on
-- this path gave 4% more script time in five alternating runs of `node bench/suites/redis.mjs --many`.
local function stepInteger(packed, now, cost, limit, w)
  local index = floor(now / w)
  local curr = 0
  local prev = 0
  local kept = -1
  if packed ~= nil then
    local low = packed % 4
    local counts = (packed - low) / 4
    local stored = index - (index - low) % 4
    if stored == index then
      curr = counts % COUNT
      prev = floor(counts / COUNT)
    elseif stored == index - 1 then
      prev = counts % COUNT
    end
    kept = (stored + 2) * w
  end
  local ok, remaining, resetMs, retryAfterMs, delayMs, expiresAt = decide(index, curr, prev, now, cost, limit, w)
  local value = nil
  if ok and curr + cost < COUNT and prev < COUNT then value = (prev * COUNT + curr + cost) * 4 + index % 4 end
  return ok, value, remaining, resetMs, retryAfterMs, delayMs, expiresAt, kept
end

return step, refund, expiresAtOf, toInteger, fromInteger, nil, nil, nil, stepInteger

-- Lua twin of gcra.ts (and so of token-bucket and leaky-bucket): the same integer arithmetic, in the
-- same order. The Redis script (stores/redis/script.ts) runs this chunk and calls step and refund with:
--   state      the stored { anchorMs, units }: the theoretical arrival time anchorMs + units / limit
--   now        ms; cost: units of the call (0 observes); limit, w, burst: limit, windowMs and capacity
-- step returns allowed, next, remaining, resetMs, retryAfterMs (math.huge: never), delayMs, expiresAt;
-- refund returns next, expiresAt. The chunk returns step and refund.
local floor = math.floor
local max = math.max

-- Ceiling division of integers (b > 0).
local function ceilDiv(a, b)
  return -floor(-a / b)
end

local function step(state, now, cost, limit, w, burst)
  -- (max(tat, now) - now) * limit: how far the schedule runs ahead of now.
  local ahead = 0
  if state ~= nil then ahead = max(0, (state[1] - now) * limit + state[2]) end
  local capacity = burst * w
  local waitMs = ceilDiv(ahead, limit)
  if cost > burst then
    return false, state, max(0, floor((capacity - ahead) / w)), waitMs, math.huge, 0, now + waitMs
  end
  local after = ahead + cost * w
  if after <= capacity then
    local anchor = floor(after / limit)
    local resetMs = ceilDiv(after, limit)
    return true, { now + anchor, after - anchor * limit }, floor((capacity - after) / w), resetMs, 0, waitMs,
      now + resetMs
  end
  return false, state, max(0, floor((capacity - ahead) / w)), waitMs, ceilDiv(after - capacity, limit), 0,
    now + waitMs
end

local function refund(state, now, cost, chargedAt, leaseId, limit, w)
  if state == nil then return nil, now end
  -- Move the schedule back by what may still be held of the charge: cost * T less the time since it
  -- was made (that much may have refilled already). A schedule behind now is simply a full bucket.
  local units = state[2] - max(0, cost * w - max(0, now - chargedAt) * limit)
  local shift = floor(units / limit)
  local anchor = state[1] + shift
  local rest = units - shift * limit
  if rest > 0 then return { anchor, rest }, anchor + 1 end
  return { anchor, rest }, anchor
end

return step, refund

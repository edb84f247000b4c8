-- Lua twin of sliding-log.ts: the same integer arithmetic, in the same order.
-- The Redis script (stores/redis/script.ts) runs this chunk and calls step and refund with:
--   state      the stored { t1, c1, t2, c2, ... } (entries in time order, one per ms), or nil
--   now        ms; cost: units of the call (0 observes); limit, windowMs: the policy's numbers
-- step returns allowed, next, remaining, resetMs, retryAfterMs (math.huge: never), delayMs, expiresAt;
-- refund returns next, expiresAt. The chunk returns step and refund.

-- Index of the first entry still inside the window (entries at or before `oldest` have left).
local function live(state, oldest)
  if state == nil then return 1 end
  local i = 1
  while i <= #state and state[i] <= oldest do i = i + 2 end
  return i
end

local function step(state, now, cost, limit, windowMs)
  local from = live(state, now - windowMs)
  local length = 0
  if state ~= nil then length = #state end
  local used = 0
  for i = from, length, 2 do used = used + state[i + 1] end
  local newest = nil
  if length >= from then newest = state[length - 1] end
  local resetMs = 0
  local expiresAt = now
  if newest ~= nil then
    resetMs = newest + windowMs - now
    expiresAt = newest + windowMs
  end
  if cost > limit then return false, state, limit - used, resetMs, math.huge, 0, expiresAt end
  if used + cost <= limit then
    -- cost 0 observes without recording (the uncharged view of a call that was not committed).
    if cost == 0 then return true, state, limit - used, resetMs, 0, 0, expiresAt end
    local next = {}
    local n = 0
    for i = from, length do
      n = n + 1
      next[n] = state[i]
    end
    if newest == now then
      next[n] = next[n] + cost
    else
      next[n + 1] = now
      next[n + 2] = cost
    end
    return true, next, limit - used - cost, windowMs, 0, 0, now + windowMs
  end
  -- Wait until the oldest entries have left the window and freed enough.
  local freed = 0
  local i = from
  while used - freed + cost > limit do
    freed = freed + state[i + 1]
    i = i + 2
  end
  return false, state, limit - used, resetMs, state[i - 2] + windowMs - now, 0, expiresAt
end

local function refund(state, now, cost, chargedAt, leaseId, limit, windowMs)
  if state == nil then return nil, now end
  local next = {}
  for i = 1, #state do next[i] = state[i] end
  for i = 1, #next, 2 do
    if next[i] == chargedAt then
      next[i + 1] = next[i + 1] - cost
      if next[i + 1] <= 0 then
        table.remove(next, i + 1)
        table.remove(next, i)
      end
      break
    end
  end
  local length = #next
  if length > 0 then return next, next[length - 1] + windowMs end
  return next, now
end

return step, refund

-- Lua twin of concurrency.ts: the same integer arithmetic, in the same order.
-- The Redis script (stores/redis/script.ts) runs this chunk and calls step and refund with:
--   state      the stored { expiresAt1, cost1, leaseId1, ... } (leases in order of expiry), or nil
--   now        ms; cost: units of the call (0 observes); limit, windowMs: the policy's numbers
--   leaseId    the call's lease (step: the lease taken; refund: the lease released)
-- step returns allowed, next, remaining, resetMs, retryAfterMs (math.huge: never), delayMs, expiresAt;
-- refund returns next, expiresAt. The chunk returns step and refund.

local function step(state, now, cost, limit, windowMs, burst, leaseId)
  local from = 1
  local held = 0
  local length = 0
  if state ~= nil then length = #state end
  while from <= length and state[from] <= now do from = from + 3 end
  for i = from, length, 3 do held = held + state[i + 1] end
  local expiresAt = now
  if length >= from then expiresAt = state[length - 2] end
  if cost > limit then return false, state, limit - held, 0, math.huge, 0, expiresAt end
  if held + cost <= limit then
    -- cost 0 observes without taking a lease (the uncharged view of a call that was not committed).
    if cost == 0 then return true, state, limit - held, 0, 0, 0, expiresAt end
    local next = {}
    local n = 0
    for i = from, length do
      n = n + 1
      next[n] = state[i]
    end
    next[n + 1] = now + windowMs
    next[n + 2] = cost
    next[n + 3] = leaseId
    return true, next, limit - held - cost, 0, 0, 0, now + windowMs
  end
  -- With no other traffic, leases leave only by expiring: wait for the oldest to free enough.
  local freed = 0
  local i = from
  while held - freed + cost > limit do
    freed = freed + state[i + 1]
    i = i + 3
  end
  return false, state, limit - held, 0, state[i - 3] - now, 0, expiresAt
end

local function refund(state, now, cost, chargedAt, leaseId)
  if state == nil then return nil, now end
  local next = {}
  local n = 0
  for i = 1, #state, 3 do
    if state[i + 2] ~= leaseId and state[i] > now then
      next[n + 1] = state[i]
      next[n + 2] = state[i + 1]
      next[n + 3] = state[i + 2]
      n = n + 3
    end
  end
  if n > 0 then return next, next[n - 2] end
  return next, now
end

return step, refund

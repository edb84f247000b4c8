-- Lua twin of sliding-log.ts: the same integer arithmetic, in the same order.
-- The Redis script (stores/redis/script.ts) runs this chunk with the policy's `limit` and calls step
-- and refund with:
--   state      a log { t1, c1, t2, c2, ... } (entries in time order, one per ms), a ring (below) as
--              load read it, or nil
--   now        ms; cost: units of the call (0 observes); limit, windowMs: the policy's numbers
-- step returns allowed, next, remaining, resetMs, retryAfterMs (math.huge: never), delayMs, expiresAt;
-- refund (of a log) returns next, expiresAt. The chunk returns step, refund, no expiresAtOf, toInteger
-- or fromInteger, then load and save (nil for a limit of SMALL or less) and decode:
--   decode(raw)     the log in a key's whole value (as the script's MGET read it), whichever format
--   load(key, limit, whole)   the state of the key, read by this twin itself: its ring's header (the
--                   entries are read as the step needs them), or the log when `whole`
--   save(key, next, now, cost, life, slack, windowMs)   writes what an allowed call (or a refund:
--                   cost 0) left; `life` the ms it matters, `slack` how much longer the key lives
--
-- A policy of a limit above SMALL keeps its log in a ring of fixed-size entries that a call updates
-- in place (GETRANGE, SETRANGE): the entries it drops from the front are only counted, and it writes
-- the one it appends and the header. So a call costs the same at limit 10,000 as at 100, where
-- reading and rewriting the whole log cost 95x more at 10,000 than at 10. Every part of a ring is
-- MessagePack: a worker on the release before (which stored every log as one MessagePack array and
-- decodes a key whole) reads the first object, [0, 0, newest, used], as a log of one entry holding
-- every cost at the newest time. That is never less than the log holds, so during a rolling deploy
-- an old worker may deny early, never allow past the limit; its write puts the key back in the older
-- format, which load reads (and the next call charged here writes a ring again). Byte offsets:
--    0- 2  94 00 00                 array of 4, first entry (0, 0): never a log's (costs are >= 1)
--    3-11  cf newest(8)             ms of the newest entry (0: none)
--   12-20  cf used(8)               the sum of the entries' costs
--   21-45  94 ce head(4) ce count(4) ce newestCost(4) cf kept(8)
--                                   kept: until when (Redis TIME) the key's TTL surely runs; 0: unknown
--   46-50  db bytes(4)              str32: the ring, opaque to MessagePack
--   51-    cap entries of t(6) c(4), big-endian, `count` of them from index `head` on, wrapping
-- 10 bytes an entry (the older format took about 11.5). A limit above 2^32 - 1 keeps the older
-- format, as a small one does; so does a call whose now is outside [0, 2^48) (year 10889), and a
-- log that holds such a time (or a cost of 2^32 or more) until it has none (fits).

local sub = string.sub
local ROOM = 51
local ENTRY = 10
local LATEST = 281474976710656
local MARK = '\148\0\0'
-- Logs of a policy of this limit or less are read and written whole, in the older format: read with
-- the batch's other keys, a short log costs less than a ring's few commands a call. On the bench's
-- full log (script time a call, whole against ring in one run): 20.0 against 28.7 us at limit 10,
-- 37.1 against 24.0 at 100; level near 40 entries.
local SMALL = 48
-- A ring of more entries than this is written smaller once three quarters of it are empty.
local SHRINK_ABOVE = 64

-- Index of the first entry still inside the window (entries at or before `oldest` have left).
local function live(state, oldest)
  if state == nil then return 1 end
  local i = 1
  while i <= #state and state[i] <= oldest do i = i + 2 end
  return i
end

-- resetMs and expiresAt of a log whose newest entry inside the window is `newest` (nil: none).
local function resetOf(newest, now, windowMs)
  if newest == nil then return 0, now end
  return newest + windowMs - now, newest + windowMs
end

-- The step on a log.
local function logStep(state, now, cost, limit, windowMs)
  local from = live(state, now - windowMs)
  local length = 0
  if state ~= nil then length = #state end
  local used = 0
  for i = from, length, 2 do used = used + state[i + 1] end
  local newest = nil
  if length >= from then newest = state[length - 1] end
  local resetMs, expiresAt = resetOf(newest, now, windowMs)
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

-- Readers of a ring's bytes (big-endian integers at 1-based p) and of its whole value (unroll: its
-- `count` entries from `head` on), made when needed: a policy of a small limit seldom meets a ring,
-- and the script runs this chunk on every call.
local function readers()
  local byte = string.byte
  local function r32(s, p)
    local a, b, c, d = byte(s, p, p + 3)
    return ((a * 256 + b) * 256 + c) * 256 + d
  end
  local function r48(s, p)
    local a, b = byte(s, p, p + 1)
    return (a * 256 + b) * 4294967296 + r32(s, p + 2)
  end
  local function r64(s, p) return r32(s, p) * 4294967296 + r32(s, p + 4) end
  local function unroll(raw)
    local head, count, cap = r32(raw, 24), r32(raw, 29), r32(raw, 48) / ENTRY
    local log = {}
    for k = 0, count - 1 do
      local p = ROOM + ENTRY * ((head + k) % cap) + 1
      log[2 * k + 1] = r48(raw, p)
      log[2 * k + 2] = r32(raw, p + 6)
    end
    return log
  end
  return r32, r48, r64, unroll
end

local unroll
local function decode(raw)
  if sub(raw, 1, 3) ~= MARK then return cmsgpack.unpack(raw) end
  if unroll == nil then unroll = select(4, readers()) end
  return unroll(raw)
end

if limit <= SMALL or limit > 4294967295 then return logStep, refund, nil, nil, nil, nil, nil, decode end

local r32, r48, r64
r32, r48, r64, unroll = readers()

local call = redis.call
local char = string.char
local function u32(n)
  local a = n % 256
  n = (n - a) / 256
  local b = n % 256
  n = (n - b) / 256
  local c = n % 256
  return char((n - c) / 256, c, b, a)
end
local function u64(n)
  local low = n % 4294967296
  return u32((n - low) / 4294967296) .. u32(low)
end

local entryBytes, headerBytes, headerOf, entriesOf
-- Redis's struct library packs in C; a server without it (not every Lua of a Redis service has it)
-- gets the same bytes from plain Lua.
local hasStruct, lib = pcall(function() return struct end)
if hasStruct and lib then
  local pack, unpack = lib.pack, lib.unpack
  entryBytes = function(t, c) return pack('>I6I4', t, c) end
  -- Header bytes 3-45, for SETRANGE at 3.
  headerBytes = function(newest, used, head, count, newestCost, kept)
    return pack('>BI8BI8BBI4BI4BI4BI8', 207, newest, 207, used, 148, 206, head, 206, count, 206, newestCost, 207, kept)
  end
  -- newest, used, head, count, newestCost, kept, the ring's bytes from bytes 0-50.
  headerOf = function(s) return unpack('>xxxxI8xI8xxI4xI4xI4xI8xI4', s) end
  -- The n entries in s into ts and cs from index k on.
  entriesOf = function(s, n, ts, cs, k)
    local p = 1
    for j = k, k + n - 1 do ts[j], cs[j], p = unpack('>I6I4', s, p) end
  end
else
  entryBytes = function(t, c)
    local low = t % 4294967296
    local high = (t - low) / 4294967296
    local a = high % 256
    return char((high - a) / 256, a) .. u32(low) .. u32(c)
  end
  headerBytes = function(newest, used, head, count, newestCost, kept)
    return '\207' .. u64(newest) .. '\207' .. u64(used) .. '\148\206' .. u32(head) .. '\206' .. u32(count)
      .. '\206' .. u32(newestCost) .. '\207' .. u64(kept)
  end
  headerOf = function(s)
    return r64(s, 5), r64(s, 14), r32(s, 24), r32(s, 29), r32(s, 34), r64(s, 39), r32(s, 48)
  end
  entriesOf = function(s, n, ts, cs, k)
    for j = 0, n - 1 do
      local p = ENTRY * j + 1
      ts[k + j] = r48(s, p)
      cs[k + j] = r32(s, p + 6)
    end
  end
end

-- A whole ring value from a log { t1, c1, ... }, `cap` entries of room.
local function ringOf(log, cap, kept)
  local n = #log / 2
  local used = 0
  local parts = {}
  for k = 1, n do
    used = used + log[2 * k]
    parts[k] = entryBytes(log[2 * k - 1], log[2 * k])
  end
  local empty = entryBytes(0, 0)
  for k = n + 1, cap do parts[k] = empty end
  local newest, newestCost = 0, 0
  if n > 0 then newest, newestCost = log[2 * n - 1], log[2 * n] end
  return MARK .. headerBytes(newest, used, 0, n, newestCost, kept) .. '\219' .. u32(ENTRY * cap) .. table.concat(parts)
end

-- Entry k (0-based, from the ring's head) of a ring that load read: t, c. Read on demand, a few at a
-- time, and kept in the ring's table.
local function entry(ring, k)
  if k >= ring.got then
    local at = (ring.head + ring.got) % ring.cap
    local want = k - ring.got + 4
    if want > ring.cap - at then want = ring.cap - at end
    if want > ring.count - ring.got then want = ring.count - ring.got end
    entriesOf(call('GETRANGE', ring.key, ROOM + ENTRY * at, ROOM + ENTRY * (at + want) - 1), want, ring.ts, ring.cs, ring.got)
    ring.got = ring.got + want
  end
  return ring.ts[k], ring.cs[k]
end

-- The log of a ring after an allowed call: the entries that stay, then the call's (or its cost added
-- to the newest entry's, in the same ms).
local function charged(ring, now, cost)
  local log = {}
  for k = ring.dropped, ring.count - 1 do
    local t, c = entry(ring, k)
    log[#log + 1] = t
    log[#log + 1] = c
  end
  local n = #log
  if n > 0 and log[n - 1] == now then
    log[n] = log[n] + cost
  else
    log[n + 1] = now
    log[n + 2] = cost
  end
  return log
end

local function load(key, _, whole)
  if whole then
    local raw = call('GET', key)
    if raw then return decode(raw) end
    return nil
  end
  -- A key of another type (not this twin's) reads as none, as the script's MGET reads it, and the
  -- call's write replaces it: GETRANGE would fail every call on it.
  local head = redis.pcall('GETRANGE', key, 0, ROOM - 1)
  if type(head) ~= 'string' or head == '' then return nil end
  if sub(head, 1, 3) ~= MARK then return cmsgpack.unpack(call('GET', key)) end
  local newest, used, at, count, newestCost, kept, bytes = headerOf(head)
  return {
    ring = true, key = key, newest = newest, used = used, head = at, count = count,
    newestCost = newestCost, kept = kept, cap = bytes / ENTRY, got = 0, ts = {}, cs = {},
  }
end

-- The step on a ring: the entries that have left are counted from the front, not copied. An allowed
-- call returns the ring with what save needs (`dropped`: the entries that have left; `left`: the
-- costs of those that stay).
local function step(state, now, cost, limit, windowMs)
  if state == nil or not state.ring then return logStep(state, now, cost, limit, windowMs) end
  local oldest = now - windowMs
  local used = state.used
  local from = 0
  while from < state.count do
    local t, c = entry(state, from)
    if t > oldest then break end
    used = used - c
    from = from + 1
  end
  local newest = nil
  if from < state.count then newest = state.newest end
  local resetMs, expiresAt = resetOf(newest, now, windowMs)
  if cost > limit then return false, state, limit - used, resetMs, math.huge, 0, expiresAt end
  if used + cost <= limit then
    if cost == 0 then return true, state, limit - used, resetMs, 0, 0, expiresAt end
    state.dropped = from
    state.left = used
    return true, state, limit - used - cost, windowMs, 0, 0, now + windowMs
  end
  local freed = 0
  local k = from
  local t, c
  while used - freed + cost > limit do
    t, c = entry(state, k)
    freed = freed + c
    k = k + 1
  end
  return false, state, limit - used, resetMs, t + windowMs - now, 0, expiresAt
end

-- Whether a ring can hold every entry of a log: times in [0, LATEST), costs below 2^32. A log read
-- in the older format may hold what it cannot: a time a caller's clock gave outside that range (a
-- time in 6 bytes would wrap, or fail to encode), or a cost a limit above 2^32 - 1 charged.
local function fits(log)
  for i = 1, #log, 2 do
    local t = log[i]
    if t < 0 or t >= LATEST or log[i + 1] > 4294967295 then return false end
  end
  return true
end

local function save(key, next, now, cost, life, slack)
  if life <= 0 then
    call('DEL', key)
    return
  end
  -- Under Redis TIME (slack 1) the TTL is written for two lives and kept in the header, so that it is
  -- rewritten about once a life; under a caller's clock it runs on another clock: always rewritten.
  local kept, ttl = 0, life + slack
  if slack == 1 then
    kept = now + 2 * life
    ttl = 2 * life + slack
  end
  if next ~= nil and next.ring and (now < 0 or now >= LATEST) then
    -- A time a ring cannot hold: the log is written whole in the older format.
    next = charged(next, now, cost)
  end
  if next == nil or not next.ring then
    -- A log (the older format read, or a refund's): written whole, as a ring exactly as large.
    if now < 0 or now >= LATEST or not fits(next) then
      call('SET', key, cmsgpack.pack(next), 'PX', life + slack)
    else
      call('SET', key, ringOf(next, #next / 2, kept), 'PX', ttl)
    end
    return
  end
  local ring = next
  local cap = ring.cap
  local head = (ring.head + ring.dropped) % cap
  local count = ring.count - ring.dropped
  local used = ring.left + cost
  local merged = count > 0 and ring.newest == now
  local shrinks = cap > SHRINK_ABOVE and 4 * (count + 1) <= cap
  if (count == cap or shrinks) and not merged then
    -- Full: written whole, unrolled into a ring twice as large, up to `limit` entries (an allowed
    -- call finds fewer: every entry costs at least 1). Three quarters empty (a burst that has left):
    -- twice as large as its entries, so that a key used now and then does not keep a burst's room.
    local log = charged(ring, now, cost)
    local grown = math.min(2 * cap, limit)
    if shrinks then grown = 2 * (count + 1) end
    if grown < count + 1 then grown = count + 1 end
    call('SET', key, ringOf(log, grown, kept), 'PX', ttl)
    return
  end
  -- The TTL still runs long enough: kept as it is.
  if slack == 1 and ring.kept >= now + life then kept = ring.kept end
  if merged then
    -- The newest entry is this millisecond's: it takes the cost.
    local newestCost = ring.newestCost + cost
    call('SETRANGE', key, ROOM + ENTRY * ((head + count - 1) % cap), entryBytes(now, newestCost))
    call('SETRANGE', key, 3, headerBytes(now, used, head, count, newestCost, kept))
  else
    call('SETRANGE', key, ROOM + ENTRY * ((head + count) % cap), entryBytes(now, cost))
    call('SETRANGE', key, 3, headerBytes(now, used, head, count + 1, cost, kept))
  end
  if kept ~= ring.kept or slack ~= 1 then call('PEXPIRE', key, ttl) end
end

return step, refund, nil, nil, nil, load, save, decode

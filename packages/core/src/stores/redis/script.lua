-- Sluice: calls of one limiter, each decided in one round trip (stores/redis/script.ts, which fills in
-- the {{…}}: the algorithms' twins, and numbers shared with the TypeScript side).
-- KEYS: for each call in turn, the state of each policy in the limiter's order; every key in one slot.
--   'r': the call's keys, then the reset mark of each (when its subject was last reset)
--   'd': the subject's keys of the subject-scoped policies, then the reset mark of each
-- ARGV[1] op: 'b' decide a batch of calls, 'r' refund one call, 'd' reset a subject (delete its keys,
--         mark when: a refund gives back nothing charged before)
-- ARGV[2] n: policies per call ('d': keys to delete)
-- ARGV[3] the clock: 't' Redis TIME, 'c' the caller's, in the arguments (a manual clock in tests), or
--         'p' Redis TIME and every call of the batch a consume of cost 1 without a lease (no per-call
--         arguments follow)
-- then per policy its algorithm code, limit, windowMs and, for the bucket algorithms, burst; then
--   'b': per call its cost (negative: a peek of that cost), lease id (0: none) and, with a caller's
--        clock, its now in ms
--   'r': cost, lease id, chargedAt and, with a caller's clock, now
--   'd' (no policies): now (with a caller's clock; else 0), then each mark's life in ms
-- Reply ('b'): { now (0 with a caller's clock), then per call and policy: allowed (1/0), remaining,
-- resetMs, retryAfterMs (-1: never), delayMs }
-- Numbers are parsed as `s + 0`, which converts once where tonumber converts twice.
local call = redis.call
local keys, argv = KEYS, ARGV
local op = argv[1]

local n = argv[2] + 0
local clocked = argv[3] == 'c'
local stride = 2
if clocked then stride = 3 elseif argv[3] == 'p' then stride = 0 end
local encode = cmsgpack.pack
local decode = cmsgpack.unpack
-- Globals cost a table lookup at each use; these run per call.
local byte = string.byte
local huge = math.huge

-- How much longer than its state matters a key lives: 1 ms under Redis TIME (Redis may time a key's
-- expiry 1 ms behind TIME); longer under a caller's clock, which may stand still while Redis's runs.
local slack = 1
local now = 0
if clocked then
  slack = {{clockGraceMs}}
else
  local time = call('TIME')
  now = time[1] * 1000 + math.floor(time[2] / 1000)
end

if op == 'd' then
  if clocked then now = argv[4] + 0 end
  call('DEL', unpack(keys, 1, n))
  for i = 1, n do call('SET', keys[n + i], now, 'PX', argv[4 + i] + slack) end
  return 0
end

-- The twin of an algorithm code: step, refund, and for the twins whose keys keep their expiry for a
-- whole window expiresAtOf, toInteger and fromInteger (else nil); then, for a twin that reads and
-- writes its key itself (a state too large to read whole on every call), load and save (else nil),
-- for a twin that decodes its own values, decode (else nil), and for a twin that can step its integer
-- without unpacking it, stepInteger (else nil). A twin may choose by the limit.
local function twinOf(code, limit)
  {{twins}}
end

-- The policies, parsed once for the whole batch.
local steps, refunds, expiresAtOfs, toIntegers, fromIntegers = {}, {}, {}, {}, {}
local loads, saves, decoders, stepIntegers = {}, {}, {}, {}
local limits, windows, bursts, codes = {}, {}, {}, {}
local loading = false
local at = 4
for i = 1, n do
  local code = argv[at]
  codes[i] = code
  limits[i] = argv[at + 1] + 0
  steps[i], refunds[i], expiresAtOfs[i], toIntegers[i], fromIntegers[i], loads[i], saves[i], decoders[i], stepIntegers[i] =
    twinOf(code, limits[i])
  if loads[i] then loading = true end
  windows[i] = argv[at + 2] + 0
  if {{burstTest}} then
    bursts[i] = argv[at + 3] + 0
    at = at + 4
  else
    bursts[i] = limits[i]
    at = at + 3
  end
end

-- The state of policy i from what its key holds (nil or false: none), and the integer it holds if it is
-- one (else nil). A twin may store its state as one integer (Redis keeps it in no more room than the
-- key's object): only under Redis TIME, whose reading its fromInteger needs. Anything else is
-- MessagePack, which never starts with a digit.
local function decodeOf(i, raw)
  if not raw then return nil end
  if decoders[i] then return decoders[i](raw) end
  local first = byte(raw, 1)
  if first >= 48 and first <= 57 then
    local packed = raw + 0
    return fromIntegers[i](packed, now, windows[i]), packed
  end
  return decode(raw)
end

-- Until when the key of policy i surely lives, given the state it holds: under Redis TIME, that
-- state's expiresAt when its twin tells it (every write gave the key at least that: see save and
-- slack); else -1. Under a caller's clock the key's TTL runs on Redis's clock, so it is always rewritten.
local function keptUntil(i, state)
  local expiresAtOf = expiresAtOfs[i]
  if slack == 1 and state ~= nil and expiresAtOf ~= nil then return expiresAtOf(state, windows[i]) end
  return -1
end

-- Writes the state of policy i with a TTL, or keeps the key's TTL when kept covers expiresAt
-- (replacing a TTL costs Redis twice what the rest of a SET does); a state that already means nothing
-- is deleted. A key that holds the integer was and keeps its TTL gets the difference added in place
-- (INCRBY allocates nothing), or nothing at all when its state is unchanged.
-- A number passed to redis.call is formatted (sprintf) at every call: the differences added, mostly one
-- for a whole batch, are formatted once each, as Redis would ('%.17g', exact for integers below 2^53).
local differences = {}
local format = string.format
-- save with the integer already made (value; nil: none, and state is written encoded).
local function write(key, value, state, expiresAt, kept, was)
  local life = expiresAt - now
  if life <= 0 then
    call('DEL', key)
    return
  end
  if kept >= expiresAt then
    if value ~= nil and was ~= nil then
      if value ~= was then
        local difference = value - was
        local text = differences[difference]
        if text == nil then
          text = format('%.17g', difference)
          differences[difference] = text
        end
        call('INCRBY', key, text)
      end
    else
      call('SET', key, value or encode(state), 'KEEPTTL')
    end
  else
    call('SET', key, value or encode(state), 'PX', life + slack)
  end
end

local function save(i, key, state, expiresAt, kept, was)
  local value = nil
  local toInteger = toIntegers[i]
  if toInteger ~= nil and slack == 1 and expiresAt > now then value = toInteger(state) end
  write(key, value, state, expiresAt, kept, was)
end

if op == 'r' then
  -- Only keys that hold a state: nothing was charged where there is none.
  local cost = argv[at] + 0
  local leaseId = argv[at + 1] + 0
  local chargedAt = argv[at + 2] + 0
  if clocked then now = argv[at + 3] + 0 end
  for i = 1, n do
    -- A charge made before the subject's last reset (or in its millisecond): the reset took it already.
    -- Not for a lease, given back by its id, which the reset dropped (marksApply in stores/store.ts).
    local mark = false
    if codes[i] ~= 'cc' then mark = call('GET', keys[n + i]) end
    local state, was = nil, nil
    if not (mark and mark + 0 >= chargedAt) then
      if loads[i] then state = loads[i](keys[i], limits[i], true) else state, was = decodeOf(i, call('GET', keys[i])) end
    end
    if state ~= nil then
      local next, expiresAt = refunds[i](state, now, cost, chargedAt, leaseId, limits[i], windows[i], bursts[i])
      if saves[i] then
        saves[i](keys[i], next, now, 0, expiresAt - now, slack)
      else
        save(i, keys[i], next, expiresAt, keptUntil(i, state), was)
      end
    end
  end
  return 0
end

-- Each call in turn, all-or-nothing over its policies (the rule of decideAll in stores/store.ts). Every
-- key is read at once; a key a call charges is written once, after the last call: a later call of the
-- batch reads what the earlier ones left (written), and a hot key costs one GET and one SET per batch.
-- A key whose twin reads and writes it itself (load, save) is not read here but at each call, and
-- written as soon as the call is charged.
local raws
if loading then
  local read, slots = {}, {}
  for k = 1, #keys do
    if not loads[(k - 1) % n + 1] then
      read[#read + 1] = keys[k]
      slots[k] = #read
    end
  end
  raws = {}
  if #read > 0 then
    local got = call('MGET', unpack(read))
    for k, j in pairs(slots) do raws[k] = got[j] end
  end
else
  raws = call('MGET', unpack(keys))
end
-- A decision's fields in the reply after position r (a retry that never comes: -1).
local function answer(reply, r, ok, remaining, resetMs, retryAfterMs, delayMs)
  if retryAfterMs == huge then retryAfterMs = -1 end
  reply[r + 1] = ok and 1 or 0
  reply[r + 2] = remaining
  reply[r + 3] = resetMs
  reply[r + 4] = retryAfterMs
  reply[r + 5] = delayMs
end

-- The commonest batch: under Redis TIME every call a consume of cost 1 without a lease ('p'), of one
-- policy whose twin steps the state it keeps in one integer (stepInteger): decided on the integers,
-- with no table a call, as the loop below decides it. Nil, with nothing written, on a key that holds
-- anything else or a count the integer cannot hold: the loop below then decides the batch.
local function integerBatch(stepInteger, limit, w)
  local reply = { now }
  local slots, slotKeys, values, olds, kepts = {}, {}, {}, {}, {}
  local nslots, expiresAt, r = 0, 0, 1
  for k = 1, #keys do
    local key = keys[k]
    local slot = slots[key]
    local packed = nil
    if slot ~= nil then
      packed = values[slot]
    else
      local raw = raws[k]
      if raw then
        local first = byte(raw, 1)
        if first < 48 or first > 57 then return nil end
        packed = raw + 0
      end
    end
    local ok, value, remaining, resetMs, retryAfterMs, delayMs, expires, kept = stepInteger(packed, now, 1, limit, w)
    answer(reply, r, ok, remaining, resetMs, retryAfterMs, delayMs)
    r = r + {{replyFields}}
    if ok then
      if value == nil then return nil end
      if slot == nil then
        nslots = nslots + 1
        slot = nslots
        slots[key], slotKeys[slot], olds[slot], kepts[slot] = slot, key, packed, kept
      end
      values[slot] = value
      expiresAt = expires
    end
  end
  for slot = 1, nslots do
    write(slotKeys[slot], values[slot], nil, expiresAt, kepts[slot], olds[slot])
  end
  return reply
end
if stride == 0 and n == 1 and stepIntegers[1] ~= nil then
  local reply = integerBatch(stepIntegers[1], limits[1], windows[1])
  if reply ~= nil then return reply end
end

-- Per key written: its slot in the lists of what to write (the policy, the state, its expiresAt, until
-- when the key surely lives as it was before the batch, the integer it held then, and now when it was
-- last charged).
local written, nwritten = {}, 0
local wkeys, wpolicies, wstates, wexpiries, wkept, wwas, wnows = {}, {}, {}, {}, {}, {}, {}
local states, integers, nexts, expiries = {}, {}, {}, {}
local reply = { now }
local r = 1
local cost, consume, leaseId = 1, true, 0
for c = 0, #keys / n - 1 do
  if stride > 0 then
    local a = at + c * stride
    cost = argv[a]
    consume = true
    if cost == '1' then
      cost = 1
    else
      cost = cost + 0
      if cost < 0 then
        cost = -cost
        consume = false
      end
    end
    leaseId = argv[a + 1] + 0
    if clocked then now = argv[a + 2] + 0 end
  end
  local base = c * n
  local first = r + 1
  local allowed = true
  for i = 1, n do
    local w = written[keys[base + i]]
    local state, was
    if loads[i] then
      state = loads[i](keys[base + i], limits[i])
    elseif w ~= nil then
      state = wstates[w]
    else
      state, was = decodeOf(i, raws[base + i])
    end
    states[i] = state
    integers[i] = was
    local ok, next, remaining, resetMs, retryAfterMs, delayMs, expiresAt =
      steps[i](state, now, cost, limits[i], windows[i], bursts[i], leaseId)
    if not ok then allowed = false end
    nexts[i] = next
    expiries[i] = expiresAt
    answer(reply, r, ok, remaining, resetMs, retryAfterMs, delayMs)
    r = r + {{replyFields}}
  end
  if allowed and consume then
    for i = 1, n do
      local key = keys[base + i]
      local w = written[key]
      if saves[i] then
        saves[i](key, nexts[i], now, cost, expiries[i] - now, slack)
      else
        if w == nil then
          nwritten = nwritten + 1
          w = nwritten
          written[key] = w
          wkeys[w] = key
          wpolicies[w] = i
          wkept[w] = keptUntil(i, states[i])
          wwas[w] = integers[i]
        end
        wstates[w] = nexts[i]
        wexpiries[w] = expiries[i]
        if clocked then wnows[w] = now end
      end
    end
  else
    -- Nothing is charged: a policy that would have allowed reports its state as it stands.
    for i = 1, n do
      local f = first + {{replyFields}} * (i - 1)
      if reply[f] == 1 then
        local _, _, remaining, resetMs, _, delayMs = steps[i](states[i], now, 0, limits[i], windows[i], bursts[i], leaseId)
        reply[f + 1] = remaining
        reply[f + 2] = resetMs
        reply[f + 3] = 0
        reply[f + 4] = delayMs
      end
    end
  end
end
for w = 1, nwritten do
  if clocked then now = wnows[w] end
  save(wpolicies[w], wkeys[w], wstates[w], wexpiries[w], wkept[w], wwas[w])
end
return reply

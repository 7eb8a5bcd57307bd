-- Sluice's Redis script, last part: reads a batch of decisions from KEYS/ARGV, decides each
-- request in order with the algorithm modules, and writes the states that changed.
--
-- ARGV (protocol 2; the C++ codec, src/backend/redis/script_codec.cpp, writes it):
--   1 "2"            protocol version
--   2 now_sec        "" = use Redis's TIME (the daemon); else virtual time (replay)
--   3 now_ns         0..999999999
--   4 L              number of limit definitions, then L times:
--                      algorithm name, flags, n, n parameter numbers (the C++ Params field
--                      order); flags: "d" = a refused request is charged as if admitted
--                      (count_denied, core/denied_charge.hpp); "bMS" = a key it refuses is
--                      blocked MS milliseconds (on_deny: block), in KEY..":block"; "rN" = a
--                      decision charges this limit N, whatever the request's cost (a rule's
--                      reserve, settled after the response); "c" = a calendar window: 4 bounds
--                      follow the params (fixed_window.lua); "p" = on_change: proportional: m
--                      and m numbers follow (the params of the limit it replaced, for states
--                      that record none; m = 0: none); "" = none
--   then requests, to the end: kind, at_sec, at_ns, cost, max_wait_ns (-1 = forever), m,
--                      then m pairs
--                      (limit index 1..L, key index into KEYS). kind:
--                      d  decide (concurrency: acquire a lease); a refusal that starts the
--                         key's block (flag "b"): `extra` is when the block ends, in Unix ms
--                      t  take up to `cost` permits, as many as reject mode would allow
--                         now (leasing); one limit; granted count in `extra`
--                      r  release the concurrency lease whose id is `cost`; one limit
--                      w  renew the concurrency lease whose id is `cost` (it expires a whole
--                         lease from now); one limit; `extra` 1 when it was still held
--                      p  peek: the key's state without charging it (core/peek.hpp: cost 0
--                         for what is left, cost 1 in reject mode for whether and when one
--                         passes); one limit; never writes; `extra` 1 when the key is stored
--                      x  reset: DEL the key, then answer as p does for a new key; `extra` 1
--                         when the key was stored
--                      b  the key's block: refused until it ends when blocked; one limit;
--                         never writes; `extra` 1 when blocked
--                      u  unblock: DEL the key's block, then answer admitted; `extra` 1 when
--                         it was blocked
--                      s  settle: charge `cost` more to the key, a negative cost gives part of
--                         a reserve back (core/settle.hpp, the algorithm's settle); answer as p
--                         does after it; one limit; always writes; `extra` 1
--                      at_sec/at_ns: this request's own instant ("" = the batch's), so one call
--                      can carry a stretch of a replayed trace
-- KEYS: each state key once; a key belongs to one limit.
-- Reply: per request, per limit, 8 integers: allowed, delay, remaining, retry_after (-1
--   never), reset_after, limit, overflow, extra (take: permits granted; concurrency acquire:
--   the lease id; a refusal that started a block: when it ends; else 0). The caller folds them (all must pass) as the local
--   backend does, so both backends share one combination rule.
-- A request is committed when all its limits allow it, or when it has one limit whose
-- reference changes its state on a denial (x/time/rate's cancelled reservation). A key never
-- committed is never written, so a first request that is denied leaves nothing behind; a
-- refused decision writes the limits that count denials (flag "d") with their charged state.

if ARGV[1] ~= '2' then
  return redis.error_reply('ERR sluice script: protocol ' .. tostring(ARGV[1]) .. ', this script speaks 2')
end
local virtual = ARGV[2] ~= ''
if virtual then
  T.now_sec = tonumber(ARGV[2])
  T.now_ns = tonumber(ARGV[3])
else
  local t = redis.call('TIME')
  T.now_sec = tonumber(t[1])
  T.now_ns = tonumber(t[2]) * 1000
end
local now = T.now_ns

local i = 4
local limits = {}
local n_limits = tonumber(ARGV[i]); i = i + 1
for l = 1, n_limits do
  local name = ARGV[i]
  local flags = ARGV[i + 1]
  local n = tonumber(ARGV[i + 2])
  i = i + 3
  if ALG[name] == nil and LAZY[name] ~= nil then LAZY[name]() end
  local alg = ALG[name]
  if alg == nil then return redis.error_reply('ERR sluice script: no algorithm ' .. tostring(name)) end
  local a = {}
  for k = 1, n do a[k] = tonumber(ARGV[i + k - 1]) end
  i = i + n
  local count_denied = string.find(flags, 'd', 1, true) ~= nil
  if count_denied and alg.charge_denied == nil then
    return redis.error_reply('ERR sluice script: ' .. name .. ' does not count denials')
  end
  local block_ms = tonumber(string.match(flags, 'b(%d+)'))
  local reserve = tonumber(string.match(flags, 'r(%d+)'))
  local L = { alg = alg, p = alg.params(a), a = a, count_denied = count_denied, block_ms = block_ms,
              cost = reserve }
  if string.find(flags, 'c', 1, true) ~= nil then
    L.p.cal = { tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]) }
    i = i + 4
  end
  if string.find(flags, 'p', 1, true) ~= nil then
    if alg.rescale == nil then
      return redis.error_reply('ERR sluice script: ' .. name .. ' does not rescale')
    end
    local m = tonumber(ARGV[i])
    local replaced = {}
    for k = 1, m do replaced[k] = tonumber(ARGV[i + k]) end
    i = i + 1 + m
    L.proportional = true
    if m > 0 then L.replaced = replaced end
    -- The state's own fields come first (a fixed number for the algorithms that rescale).
    L.width = #alg.encode(L.p, alg.start(L.p, now))
  end
  limits[l] = L
end

-- on_change: proportional. A state records after its own fields the parameters it was written
-- under (count, then the numbers); one written under others, or recording none under the limit
-- this one replaced, is carried over as the local table carries it (A::retune, then
-- core/rescale.hpp), at the instant this limit first meets it.
local function same(a, b)
  if #a ~= #b then return false end
  for k = 1, #a do
    if a[k] ~= b[k] then return false end
  end
  return true
end
local function carried(L, f, s, now)
  local under = L.replaced
  if #f > L.width then
    under = {}
    for k = 1, f[L.width + 1] do under[k] = f[L.width + 1 + k] end
  end
  if under == nil or same(under, L.a) then return s end
  local from = L.alg.params(under)
  if L.alg.retune ~= nil then s = L.alg.retune(from, L.p, s, now) end
  return L.alg.rescale(from, L.p, s, now)
end

-- Virtual time is not Redis's clock: a state's time-to-live is kept at least an hour, so
-- a replay never loses a state to real time passing while it runs.
local MIN_VIRTUAL_TTL_MS = 3600 * 1000

-- Redis turns a Lua number into an integer with a C cast: 2^63 and beyond would wrap. The
-- largest double below 2^63 is what the C++ codec reads as "forever".
local SATURATED = 9223372036854774784
local function reply_int(x)
  if x >= SATURATED then return SATURATED end
  return x
end

-- A state the algorithm never calls idle (SmoothBursty refills to its maximum and stays
-- there) would live forever: Redis keeps it at most a week, after which the key starts afresh.
local MAX_TTL_MS = 7 * 24 * 3600 * 1000

-- core::peek: what is left now (cost 0), and whether and when cost 1 would pass at once.
local function peek(L, s, now)
  local d = L.alg.decide(L.p, s, now, 0, 0)
  local one = L.alg.decide(L.p, s, now, 1, 0)
  local out = decision(one.allowed, 0, d.remaining, 0, d.reset_after, d.limit)
  if one.allowed then out.delay = one.delay else out.retry_after = one.retry_after end
  out.overflow = d.overflow or one.overflow
  return out
end

-- A blocked key's refusal (engine/block_table.hpp: blocked_decision): `left_ms` to go.
local function blocked(L, s, now, left_ms)
  local left = left_ms * 1000000
  return decision(false, 0, 0, left, left, L.alg.decide(L.p, s, now, 0, 0).limit)
end

local states = {}   -- key index -> state, or false for a key not stored
local owner = {}    -- key index -> limit written with
local out = {}
local n_args = #ARGV
-- A cached state is kept in the frame (second) it was loaded or decided in; a request at
-- another second moves it to its own frame through the module's encode/decode.
local frames = {}   -- key index -> the second its cached state is relative to
local function in_frame(ki, L)
  local s = states[ki]
  if s and frames[ki] ~= T.now_sec then
    s = L.alg.decode(L.p, split(join(L.alg.encode(L.p, s))), frames[ki] - T.now_sec)
    states[ki] = s
  end
  frames[ki] = T.now_sec
  return s
end
while i <= n_args do
  local kind = ARGV[i]
  if ARGV[i + 1] ~= '' then
    virtual = true  -- an instant of the caller's own clock: never a TTL shorter than the floor
    T.now_sec = tonumber(ARGV[i + 1])
    T.now_ns = tonumber(ARGV[i + 2])
    now = T.now_ns
  end
  local cost = tonumber(ARGV[i + 3])
  local max_wait = tonumber(ARGV[i + 4])
  if max_wait < 0 then max_wait = FOREVER end
  local m = tonumber(ARGV[i + 5])
  i = i + 6
  local steps = {}
  local all = true
  local any_blocked = false  -- a blocked key is refused undecided: nothing charged, no new block
  for j = 1, m do
    local L = limits[tonumber(ARGV[i])]
    local ki = tonumber(ARGV[i + 1])
    i = i + 2
    local s = states[ki]
    if s == nil then
      local raw = redis.call('GET', KEYS[ki])
      s = false
      if raw then
        local f = split(raw)
        local base = table.remove(f, 1)
        s = L.alg.decode(L.p, f, base - T.now_sec)
        if L.proportional then s = carried(L, f, s, now) end
      end
      states[ki] = s
      frames[ki] = T.now_sec
    else
      s = in_frame(ki, L)
    end
    local current = s or L.alg.start(L.p, now)
    local d, next_state, commit_on_denial, extra
    local block_left = 0
    if L.block_ms and (kind == 'd' or kind == 'b' or kind == 'u') then
      block_left = redis.call('PTTL', KEYS[ki] .. ':block')
    end
    if kind == 'x' then
      extra = redis.call('DEL', KEYS[ki])
      states[ki] = false
      owner[ki] = nil
      current = L.alg.start(L.p, now)
    end
    if kind == 'p' or kind == 'x' then
      d = peek(L, current, now)
      if kind == 'p' then extra = s and 1 or 0 end
    elseif (kind == 'b' or kind == 'u') and L.block_ms then
      extra = block_left > 0 and 1 or 0
      if kind == 'u' and extra == 1 then redis.call('DEL', KEYS[ki] .. ':block') end
      if kind == 'b' and extra == 1 then d = blocked(L, current, now, block_left)
      else d = decision(true, 0, -1, 0, 0, -1) end
    elseif kind == 'd' and block_left > 0 then
      d = blocked(L, current, now, block_left)
    elseif kind == 'd' then
      d, next_state, commit_on_denial, extra = L.alg.decide(L.p, current, now, L.cost or cost, max_wait)
    elseif kind == 't' and L.alg.take ~= nil then
      extra, d, next_state = L.alg.take(L.p, current, now, cost)
    elseif kind == 'r' and L.alg.release ~= nil then
      next_state = L.alg.release(L.p, current, now, cost)
      d = decision(true, 0, -1, 0, 0, -1)
    elseif kind == 'w' and L.alg.renew ~= nil then
      next_state, extra = L.alg.renew(L.p, current, now, cost)
      d = decision(true, 0, -1, 0, 0, -1)
    elseif kind == 's' and L.alg.settle ~= nil then
      next_state = current
      if cost ~= 0 then next_state = L.alg.settle(L.p, current, now, cost) end
      d = peek(L, next_state, now)
      extra = 1
    else
      return redis.error_reply('ERR sluice script: request kind ' .. tostring(kind) .. ' does not apply to this algorithm')
    end
    steps[j] = { ki = ki, L = L, d = d, next_state = next_state, cod = commit_on_denial,
                 extra = extra or 0, current = current, blocked = block_left > 0 }
    if not d.allowed then all = false end
    if block_left > 0 then any_blocked = true end
  end
  -- take, release and renew always write (a take that granted nothing leaves the state as it was).
  local commit = all or (m == 1 and (steps[1].cod or kind ~= 'd'))
  if kind == 'p' or kind == 'x' or kind == 'b' or kind == 'u' or any_blocked then commit = false end
  if kind == 'w' and steps[1].extra == 0 then commit = false end -- nothing held: nothing to write
  -- Refused: the limits that count refusals are charged all the same (local::decide_all).
  local charge = not commit and kind == 'd' and not any_blocked
  for j = 1, m do
    local st = steps[j]
    -- A refusal by a limit that blocks starts the key's block; the wait is the block's when
    -- that is longer (engine/block_table.hpp: start_block).
    if charge and st.L.block_ms and not st.d.allowed and not st.d.overflow then
      redis.call('SET', KEYS[st.ki] .. ':block', '1', 'PX', st.L.block_ms)
      st.extra = T.now_sec * 1000 + math.floor(T.now_ns / 1000000) + st.L.block_ms
      local block = st.L.block_ms * 1000000
      if st.d.retry_after ~= NEVER and st.d.retry_after < block then st.d.retry_after = block end
      if st.d.reset_after < block then st.d.reset_after = block end
    end
    if commit then
      states[st.ki] = st.next_state
      frames[st.ki] = T.now_sec
      owner[st.ki] = st.L
    elseif charge and st.L.count_denied and not st.d.overflow then
      states[st.ki] = st.L.alg.charge_denied(st.L.p, st.current, now, st.L.cost or cost)
      frames[st.ki] = T.now_sec
      owner[st.ki] = st.L
    end
    local d = st.d
    local n = #out
    out[n + 1] = d.allowed and 1 or 0
    out[n + 2] = reply_int(d.delay)
    out[n + 3] = reply_int(d.remaining)
    out[n + 4] = reply_int(d.retry_after)
    out[n + 5] = reply_int(d.reset_after)
    out[n + 6] = reply_int(d.limit)
    out[n + 7] = d.overflow and 1 or 0
    out[n + 8] = reply_int(st.extra)
  end
end

for ki, L in pairs(owner) do
  local s = states[ki]
  -- The TTL is measured from the last request's instant, in the state's own frame.
  local ttl_ms = math.ceil(L.alg.ttl(L.p, s, now + (T.now_sec - frames[ki]) * NS_PER_SEC) / 1000000)
  if virtual and ttl_ms < MIN_VIRTUAL_TTL_MS then ttl_ms = MIN_VIRTUAL_TTL_MS end
  if ttl_ms > MAX_TTL_MS then ttl_ms = MAX_TTL_MS end
  if ttl_ms < 1 then ttl_ms = 1 end
  local value = num(frames[ki]) .. ' ' .. join(L.alg.encode(L.p, s))
  if L.proportional then value = value .. ' ' .. #L.a .. ' ' .. join(L.a) end
  redis.call('SET', KEYS[ki], value, 'PX', ttl_ms)
end
return out

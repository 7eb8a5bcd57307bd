-- queue (core/uniform_queue.hpp) for the Redis script: Sentinel 1.8.9's ThrottlingController,
-- requests spaced one cost apart on its ms or ns clock, queued up to max-wait, else rejected.
--
-- Params (C++ field order): rate.count, rate.period_ns, max_wait_ns, count (permits per
-- second, a double), max_queueing_ms, use_nanos (0/1).
--
-- State: latestPassedTime, in the clock's unit, as (second relative to the frame, units
-- within that second), so it shifts by whole seconds on load and never has to hold an
-- absolute nanosecond time (1.8e18) in a double. A key that has never passed is { never =
-- true }: it passes its first request at once, whatever the time and the cost, as the C++
-- core's kNeverPassed does (Sentinel's -1 lies on an epoch clock). It is never stored: the
-- first decision always passes and replaces it. Every answer is computed from exact quantities:
--   elapsed = current - latest   (exact while below 2^53 units; beyond, it exceeds any
--                                 spacing below 2^52, and a larger spacing compares as pairs)
--   spacing = Sentinel's rounded cost; one of 2^52 units or more (52 days of nanoseconds)
--             takes the exact pair (seconds, units) path. The ms clock is refused beyond
--             2^53 ms (285,000 years), where int64 nanoseconds end anyway.
-- A retry_after beyond 2^53 ns is answered as the double at or below the exact value.
LAZY['queue'] = function()
  local TWO63 = 9223372036854775808
  local CAP_NS = 9223372036854774784 -- the largest double below 2^63: Redis casts to int64
  local FAR = EXACT / 2
  local KEEP_NS = EXACT * 1000000    -- 2^53 ms, the longest TTL we hand to PX
  local INT64_MAX_SEC, INT64_MAX_NS = 9223372036, 854775807
  local STAT_DURATION_MS = 1000

  -- Java's Math.round(double): the closest long, ties toward positive infinity; saturating
  -- (2^63 stands for Long.MAX_VALUE).
  local function java_round(x)
    if x ~= x then return 0 end
    if x >= TWO63 then return TWO63 end
    if x <= -TWO63 then return -TWO63 end
    local f = math.floor(x)
    if x - f >= 0.5 then return f + 1 end
    return f
  end

  -- An integer-valued double x >= 0 (below 2^64) as (x div 1e9, x mod 1e9), exactly.
  local function split_ns(x)
    if x < EXACT then
      local q = math.floor(x / NS_PER_SEC)
      return q, x - q * NS_PER_SEC
    end
    local f, e = math.frexp(x) -- x = (f * 2^53) * 2^(e-53), both factors integers
    local n = mulmod(f * EXACT, 2 ^ (e - 53), NS_PER_SEC)
    return math.floor((x - n) / NS_PER_SEC + 0.5), n -- the quotient is below 2^35
  end

  -- seconds * 1e9 + ns (0 <= ns < 1e9) for a value shown to users: the double at or below
  -- it, so ceil-to-microseconds gives back the core's value; INT64_MAX saturates, as
  -- saturating_mul does, to the largest double below 2^63 (Redis casts replies to int64).
  local function shown_ns(sec, ns)
    if sec > INT64_MAX_SEC or (sec == INT64_MAX_SEC and ns > INT64_MAX_NS) then return CAP_NS end
    local x = sec * NS_PER_SEC + ns
    if x < EXACT then return x end
    while true do
      local xs, xn = split_ns(x)
      if not (xs > sec or (xs == sec and xn > ns)) then return x end
      local f, e = math.frexp(x) -- step to the double below x
      local ulp = 2 ^ (e - 53)
      if f == 0.5 then ulp = ulp / 2 end
      x = x - ulp
    end
  end

  -- A pair (seconds, ns) with ns in [0, 1e9).
  local function norm(sec, ns)
    local q = math.floor(ns / NS_PER_SEC)
    return sec + q, ns - q * NS_PER_SEC
  end

  local M = {}

  M.params = function(a)
    local p = { count_rate = a[1], period = a[2], max_wait = a[3], count = a[4],
                max_queueing_ms = a[5], use_nanos = a[6] ~= 0 }
    p.unit = p.use_nanos and 1 or 1000000     -- ns per clock unit
    p.per_sec = p.use_nanos and NS_PER_SEC or 1000 -- clock units per second
    p.max_queue = p.use_nanos and p.max_queueing_ms * 1000000 or p.max_queueing_ms
    return p
  end

  M.start = function(p, now) return { never = true } end

  -- Spacing for `acquire` permits, in the clock's unit, computed as Sentinel does.
  local function cost_time(p, acquire)
    if p.use_nanos then
      return java_round(1.0 * 1e6 * STAT_DURATION_MS * acquire / p.count)
    end
    return java_round(1.0 * STAT_DURATION_MS * acquire / p.count)
  end

  -- The state for a pass at `sub` units into the current frame's second.
  local function at(p, sub)
    local sec = math.floor(sub / p.per_sec)
    return { sec = sec, sub = sub - sec * p.per_sec }
  end

  -- C++'s checked add: spacing + latestPassedTime beyond INT64_MAX.
  local function expected_overflows(p, s, spacing)
    if p.use_nanos then
      local ss, sn
      if spacing >= TWO63 then ss, sn = INT64_MAX_SEC, INT64_MAX_NS else ss, sn = split_ns(spacing) end
      local ts, tn = ss + s.sec + T.now_sec, sn + s.sub
      if tn >= NS_PER_SEC then ts, tn = ts + 1, tn - NS_PER_SEC end
      return ts > INT64_MAX_SEC or (ts == INT64_MAX_SEC and tn > INT64_MAX_NS)
    end
    -- ms: latest is below 2^53 (checked by the caller), so only a spacing near 2^63 can
    -- overflow, and 2^63 - spacing is then exact (Sterbenz).
    if spacing < 2 ^ 62 then return false end
    local latest = (s.sec + T.now_sec) * 1000 + s.sub
    local room = 1 -- Long.MAX_VALUE + latest overflows for latest >= 1
    if spacing < TWO63 then room = TWO63 - spacing end
    return latest >= room
  end

  M.decide = function(p, s, now, cost, max_wait)
    if not p.use_nanos and not ((T.now_sec + 1) * 1000 < EXACT) then return overflowed(), s, false end
    local unit = p.unit
    local current = now
    if not p.use_nanos then current = math.floor(now / 1000000) end
    if s.never then return decision(true, 0, 0, 0, 0, -1), at(p, current), false end
    local spacing = cost_time(p, cost)
    if expected_overflows(p, s, spacing) then return overflowed(), s, false end
    -- elapsed = current - latest, in units; beyond 2^53 it is rounded but larger than FAR.
    local elapsed = -s.sec * p.per_sec + (current - s.sub)
    local passes, wait, retry_sec, retry_ns
    if spacing < FAR then
      passes = spacing <= elapsed
      if not passes then wait = spacing - elapsed end
    elseif not p.use_nanos then
      -- the ms clock's elapsed is exact (the guard above); so is a wait that can be queued
      passes = spacing <= elapsed
      if not passes then wait = spacing - elapsed end
    else
      -- both may be beyond 2^53 ns: compare (seconds, ns) pairs
      local ss, sn = split_ns(spacing)
      local es, en = -s.sec, current - s.sub
      if en < 0 then es, en = es - 1, en + NS_PER_SEC end
      passes = ss < es or (ss == es and sn <= en)
      if not passes then
        wait = (ss - es) * NS_PER_SEC + (sn - en) -- exact where it can be queued
        local qs, qn = split_ns(p.max_queue)
        retry_sec, retry_ns = norm(ss - es - qs, sn - en - qn)
      end
    end
    if passes then
      return decision(true, 0, 0, 0, 0, -1), at(p, current), false
    end
    if wait > p.max_queue then
      local ahead = -elapsed -- latest - current
      if ahead < 0 then ahead = 0 end
      if retry_sec == nil then
        -- (wait - max_queue) * unit; the ms clock's wait may be rounded only beyond 2^53 ms,
        -- where the nanoseconds saturate anyway
        local over = wait - p.max_queue
        if p.use_nanos then
          retry_sec, retry_ns = norm(0, over)
        else
          local q = math.floor(over / 1000)
          retry_sec, retry_ns = q, (over - q * 1000) * 1000000
        end
      end
      return denied(shown_ns(retry_sec, retry_ns), 0, ahead * unit, -1), s, false
    end
    local delay = wait * unit
    return decision(true, delay, 0, 0, delay, -1), at(p, current + wait), false
  end

  M.encode = function(p, s) return { s.sec, s.sub } end
  M.decode = function(p, f, shift_sec) return { sec = f[1] + shift_sec, sub = f[2] } end

  -- idle() once the last pass is more than 1024 single spacings ago (a margin of 1ms covers
  -- the rounding of spacings beyond 2^53 ns).
  M.ttl = function(p, s, now)
    local idle_after = (cost_time(p, 1) * 1024 + 1 + s.sub) * p.unit
    local ttl = (s.sec * NS_PER_SEC + idle_after - now) * (1 + 1e-12) + 1000000
    if not (ttl < KEEP_NS) then return KEEP_NS end
    return ttl
  end

  ALG['queue'] = M
end

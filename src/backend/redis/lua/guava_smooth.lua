-- Guava 31.1's SmoothRateLimiter for the Redis script (core/smooth_rate_limiter.hpp): the
-- reservation logic smooth_bursty.lua and smooth_warmup.lua share; named to load before them.
--
-- SMOOTH.limiter(Shape) builds an ALG module from a shape, as the C++ template does. Shape:
--   params(a), stable_interval(p), cool_down_interval(p), max_permits(p), initial_permits(p),
--   stored_permits_to_wait_time(p, stored, permits_to_take)
-- State: stored permits (a double, %.17g round-trips it) and the next free ticket in whole
-- microseconds, frame-relative (shifted by 1e6 per second on load). Guava's micros are
-- now/1000 truncated; a frame starts on a whole second, so floor(now_ns/1000) in the frame is
-- the absolute truncation shifted by whole seconds, and every expression below only uses
-- differences of such times: the answers do not depend on the frame.
--
-- Exactness: the double arithmetic is Guava's, operation for operation. Java's long
-- arithmetic is exact here below 2^53 microseconds (285 years): a ticket or a wait beyond
-- that is refused as overflow where Java would saturate at 2^63. Durations are whole
-- microseconds answered in nanoseconds, and a reply integer is a double: from 2^53 ns (104
-- days) on, us * 1000 may not be one, so the reply is the double just at or below it (less
-- than 1us below; below 2^62 ns (146 years) never below the previous microsecond, so
-- ceil-to-microseconds, as replay prints, gives back Guava's value). Beyond 2^63 ns a delay
-- is overflow as in the core; retry/reset saturate at the largest double below 2^63 (the
-- core: INT64_MAX).
local SMOOTH = {}
local function load_smooth()
  local TWO63 = 9223372036854775808
  local CAP_NS = 9223372036854774784 -- the largest double below 2^63: Redis casts to int64
  local MAX_US = 9223372036854775 -- INT64_MAX / 1000: a larger us * 1000 leaves int64
  -- A TTL for a state that never becomes idle: 2^53 ms, a finite PX Redis accepts.
  local KEEP_NS = EXACT * 1000000

  -- Java's (long) cast of a double: truncation toward zero, saturating, NaN -> 0 (2^63
  -- stands for Long.MAX_VALUE; anything that large is refused before it is answered).
  local function java_d2l(x)
    if x ~= x then return 0 end
    if x >= TWO63 then return TWO63 end
    if x <= -TWO63 then return -TWO63 end
    if x >= 0 then return math.floor(x) end
    return math.ceil(x)
  end
  SMOOTH.java_d2l = java_d2l

  -- Guava's LongMath.saturatedAdd, for the informative values (exact below 2^53).
  local function saturated_add(a, b)
    local r = a + b
    if r >= TWO63 then return TWO63 end
    if r <= -TWO63 then return -TWO63 end
    return r
  end

  local function fits(x) return x < EXACT and x > -EXACT end

  -- us * 1000 for 0 <= us <= MAX_US, rounded down to a double: us * 1000 == (us * 125) * 8
  -- and only us * 125 can round; its error is computed exactly from us's two 26-bit halves.
  local function ns_of_us(us)
    local m = us * 125
    if m < EXACT then return m * 8 end
    local hi = math.floor(us / 67108864)
    local err = (hi * 125 * 67108864 - m) + (us - hi * 67108864) * 125 -- exact: Sterbenz
    if err < 0 then
      local f, e = math.frexp(m) -- m = f * 2^e, 0.5 <= f < 1: its ulp is 2^(e-53)
      local ulp = 2 ^ (e - 53)
      if f == 0.5 then ulp = ulp / 2 end -- the double below a power of two is closer
      m = m - ulp
    end
    if m * 8 >= TWO63 then return CAP_NS end -- Redis casts a reply to int64
    return m * 8
  end

  -- saturating_mul(us, kNanosPerMicro) for a value shown to users (us >= 0 here).
  local function shown_ns(us)
    if us > MAX_US then return CAP_NS end
    return ns_of_us(us)
  end

  -- Guava's micros: now_ns / 1000 truncated (floor: a frame-relative time may be negative).
  local function micros(now) return math.floor(now / 1000) end

  function SMOOTH.limiter(Shape)
    local M = { params = Shape.params }

    local function resync(p, s, now_us)
      if now_us > s.next_free then
        local fresh = (now_us - s.next_free) / Shape.cool_down_interval(p)
        return { stored = math.min(Shape.max_permits(p), s.stored + fresh), next_free = now_us }
      end
      return s
    end

    -- Until the limiter has stored its maximum again (Guava never says; informative).
    local function reset_after(p, s, now_us)
      local missing = Shape.max_permits(p) - s.stored
      local owed = s.next_free - now_us
      if owed < 0 then owed = 0 end
      return shown_ns(saturated_add(owed, java_d2l(missing * Shape.cool_down_interval(p))))
    end

    M.start = function(p, now)
      return { stored = Shape.initial_permits(p), next_free = micros(now) }
    end

    -- max_wait == FOREVER is acquire(cost); otherwise tryAcquire(cost, max_wait), whose
    -- canAcquire compares the next free ticket, before any resync, with now + timeout.
    M.decide = function(p, s0, now, cost, max_wait)
      local now_us = micros(now)
      if max_wait ~= FOREVER then
        local timeout_us = idiv(max_wait, 1000)
        if s0.next_free - timeout_us > now_us then
          local retry = shown_ns(s0.next_free - timeout_us - now_us)
          return denied(retry, 0, reset_after(p, s0, now_us), -1), s0, false
        end
      end
      local s = resync(p, s0, now_us)
      local moment_available = s.next_free
      local required = cost
      local from_stored = math.min(required, s.stored)
      local fresh = required - from_stored
      local wait_us = saturated_add(Shape.stored_permits_to_wait_time(p, s.stored, from_stored),
                                    java_d2l(fresh * Shape.stable_interval(p)))
      local next_free = saturated_add(s.next_free, wait_us)
      -- Java's long would still be exact here, ours would not: refuse rather than round.
      if not (fits(wait_us) and fits(next_free)) then return overflowed(), s0, false end
      local next = { stored = s.stored - from_stored, next_free = next_free }
      local delay_us = moment_available - now_us
      if delay_us < 0 then delay_us = 0 end
      if delay_us > MAX_US then return overflowed(), s0, false end
      local remaining = java_d2l(next.stored)
      return decision(true, ns_of_us(delay_us), remaining, 0, reset_after(p, next, now_us), -1), next, false
    end

    M.encode = function(p, s) return { s.stored, s.next_free } end
    M.decode = function(p, f, shift_sec)
      return { stored = f[1], next_free = f[2] + shift_sec * 1000000 }
    end

    -- idle(): resync gives back the initial permits and the next free ticket has passed. A
    -- limiter that starts below its maximum (SmoothBursty) refills past its start and never
    -- looks fresh again; one that starts at its maximum (SmoothWarmingUp, or a zero burst)
    -- does once it has refilled: after (max - stored) * cool-down micros, bounded here from
    -- above with a margin far wider than the roundings of resync's sum.
    M.ttl = function(p, s, now)
      local max = Shape.max_permits(p)
      if Shape.initial_permits(p) ~= max then return KEEP_NS end
      local idle_us = s.next_free
      if not (s.stored >= max) then
        local refill = (max - s.stored) * Shape.cool_down_interval(p)
        refill = math.ceil(refill * (1 + 1e-9)) + 1
        if not (refill < EXACT) then return KEEP_NS end
        idle_us = idle_us + refill
      end
      local ttl = idle_us * 1000 - now
      if ttl > KEEP_NS then return KEEP_NS end
      return ttl
    end

    return M
  end
end

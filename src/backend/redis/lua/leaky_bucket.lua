-- leaky-bucket (core/leaky_bucket.hpp): nginx 1.22 limit_req for the Redis backend, deciding
-- exactly as the C++ core does (ms clock, excess in milli-requests, nginx's delay rule).
--
-- Params (C++ field order): rate.count, rate.period_ns, rate_milli, burst, delay, where the
-- codec sends nodelay (C++ kNoDelay = INT64_MAX / 1000, not a double) as -1.
-- State: excess (milli-requests; -1 for C++'s kFresh = INT64_MIN, which no double holds and
-- which a real excess, never negative, cannot be) and last_ms relative to the frame. C++ cuts
-- absolute ns to ms; the frame starts on a whole second, so cutting the frame-relative time
-- the same way (toward zero of the absolute value) gives the same ms, shifted by whole
-- seconds' worth.
LAZY['leaky-bucket'] = function()
  local FRESH = -1
  local NO_DELAY = -1
  local FOREVER_MS = 9223372036854 -- kForever / kNanosPerMilli
  local MAXD = 9223372036854774784 -- the largest double below 2^63: kForever on the wire
  local TTL_CAP = 9.3e18           -- see token_bucket.lua: past int64's time line

  -- now / kNanosPerMilli of the absolute time, frame-relative.
  local function ms_of(now)
    if T.now_sec < 0 then return math.ceil(now / 1000000) end
    return fdiv(now, 1000000)
  end

  -- ms * 1e6 (ms <= FOREVER_MS, so it fits int64) when a double holds it exactly, which Redis
  -- then replies exactly: 1e6 = 15625 * 2^6, so the odd part of ms times 15625 must be exact.
  local function ms_to_ns(ms)
    local odd = ms
    while odd ~= 0 and odd % 2 == 0 do odd = odd / 2 end
    if not exact(odd * 15625) then return nil end
    return ms * 1000000
  end

  -- floor(rate_milli * ms / 1000) for ms >= 0, split so each product stays exact; a leak
  -- beyond 2^53 only ever clears the excess, so its rounding is harmless.
  local function leaked(p, ms)
    local q = fdiv(p.rate_milli, 1000)
    local m = p.rate_milli - q * 1000
    return q * ms + fdiv(m * ms, 1000)
  end

  -- max(0, (burst*1000 - excess) / 1000) truncated, as burst - ceil(excess/1000), which
  -- needs no product beyond 2^53.
  local function remaining(p, excess)
    if excess == FRESH then return p.burst + 1 end
    return math.max(0, p.burst - math.ceil(excess / 1000))
  end

  -- Until the excess has leaked away (informative: reset_after).
  local function drain_time(p, excess)
    local ms = fdiv(excess * 1000, p.rate_milli)
    if ms > FOREVER_MS then return MAXD end
    return ms_to_ns(ms) or ms * 1000000
  end

  -- The first whole millisecond at which rate*ms/1000 has leaked enough for this request.
  -- Informative; beyond 2^53 its doubles round (needs of 9e9 requests, waits past 104 days).
  local function retry_after(p, s, now, cost)
    local need = s.excess + (cost - p.burst) * 1000
    local ms = math.ceil(need * 1000 / p.rate_milli)
    if exact(need * 1000 + p.rate_milli) then ms = idiv(need * 1000 + p.rate_milli - 1, p.rate_milli) end
    local wait = (s.last_ms + ms) * 1000000 - now
    if wait >= 9223372036854775808 then return NEVER end
    if wait > MAXD then wait = MAXD end
    return math.max(wait, 1)
  end

  local function decide(p, s, now, cost, max_wait)
    local now_ms = ms_of(now)
    local ms = now_ms - s.last_ms
    if ms < -60000 then
      ms = 1
    elseif ms < 0 then
      ms = 0
    end
    -- C++ compares excess - rate*ms/1000 + cost*1000 with burst*1000 in Int128; here the same
    -- sum is grouped as excess - leak + (cost - burst)*1000, which stays exact for every cost
    -- near the burst, however large both are.
    local c1000 = cost * 1000
    local step = (cost - p.burst) * 1000
    local excess, over
    if s.excess == FRESH then
      excess = 0
      over = -1
      ms = 0
    else
      local leak = leaked(p, ms)
      over = s.excess - leak + step -- excess - burst*1000, before the clamp at 0
      if (leak > EXACT or not exact(step)) and
          math.abs(over) <= (s.excess + leak + math.abs(step)) * 2 ^ -50 then
        return overflowed(), s, false -- too close to call on rounded numbers
      end
      excess = s.excess - leak + c1000
      if excess < 0 then excess = 0 end
      -- An admitted excess is stored: it must be exact (a cost beyond 2^53 / 1000 is not).
      if over <= 0 and excess > 0 and not exact(s.excess + c1000) then return overflowed(), s, false end
    end
    if over > 0 then
      return denied(retry_after(p, s, now, cost), remaining(p, s.excess),
                    drain_time(p, math.max(s.excess, 0)), p.burst + 1), s, false
    end
    local e = excess
    local last_ms = s.last_ms
    if ms ~= 0 or s.excess == FRESH then last_ms = now_ms end
    local delay = 0
    if p.delay ~= NO_DELAY and e > p.delay * 1000 then
      local beyond = e - p.delay * 1000
      if not exact(beyond * 1000) then return overflowed(), s, false end
      local delay_ms = idiv(beyond * 1000, p.rate_milli)
      if delay_ms > FOREVER_MS then return overflowed(), s, false end
      delay = ms_to_ns(delay_ms)
      if delay == nil then return overflowed(), s, false end
    end
    -- Cost 0 (a peek) leaves a new key new: all burst + 1 of its first instant are still there.
    local left = remaining(p, e)
    if cost == 0 and s.excess == FRESH then left = remaining(p, FRESH) end
    return decision(true, delay, left, 0, drain_time(p, e), p.burst + 1),
           { excess = e, last_ms = last_ms }, false
  end

  ALG['leaky-bucket'] = {
    params = function(a)
      return { count = a[1], period = a[2], rate_milli = a[3], burst = a[4], delay = a[5] }
    end,

    start = function(p, now) return { excess = FRESH, last_ms = ms_of(now) } end,

    decide = decide,

    -- Leasing: the most permits limit_req would pass now, charged as that request would be.
    -- Allowed is monotone in the cost (bisection over decide itself); note nginx passes a new
    -- key's first request whatever its cost, so a fresh key grants all that is asked.
    take = function(p, s, now, want) return take_largest(decide, p, s, now, want) end,

    encode = function(p, s) return { s.excess, s.last_ms } end,
    decode = function(p, f, shift_sec) return { excess = f[1], last_ms = f[2] + shift_sec * 1000 } end,

    -- Until nginx's expiry rule holds (C++ idle()): 60 s after last_ms and the excess leaked
    -- away; a millisecond and a relative 1e-12 of slack cover the ms cut and float rounding.
    ttl = function(p, s, now)
      if s.excess == FRESH then return 0 end
      local need_ms = math.max(60000, math.ceil(s.excess * 1000 / p.rate_milli * (1 + 1e-12)) + 1)
      local t = (s.last_ms + need_ms + 1) * 1000000 - now
      if t > TTL_CAP then return TTL_CAP end
      return t
    end,

    -- on_change: proportional (core/rescale.hpp; LeakyBucket::retune keeps the excess): the
    -- excess scales with the burst; a fresh key stays fresh.
    rescale = function(from, to, s, now)
      if s.excess == FRESH or from.burst <= 0 then return s end
      return { excess = scaled(s.excess, to.burst, from.burst), last_ms = s.last_ms }
    end,
  }
end

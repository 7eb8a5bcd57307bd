-- gcra (core/gcra.hpp): redis-cell's GCRA for the Redis backend, one TAT per key, deciding
-- exactly as the C++ core does (the same integer nanoseconds, the same remaining).
--
-- Params (C++ field order): rate.count, rate.period_ns, burst, interval, tolerance,
-- interval_us, per_interval_us. State: the TAT, in frame-relative nanoseconds.
-- C++ refuses (overflow) a TAT beyond int64's absolute time line; so does this module, and it
-- also refuses where a value would leave the script's exact 2^53 (a TAT over 104 days ahead, a
-- tolerance beyond 2^53 ns), rather than decide on a rounded number.
LAZY['gcra'] = function()
  -- INT64_MAX as whole seconds and the nanosecond rest: the absolute time line's end.
  local END_SEC = 9223372036
  local END_NS = 854775807

  local function limit(p) return p.burst + 1 end

  -- The largest frame-relative instant whose absolute value fits int64 (exact where it
  -- matters: near the end it is small; far from it, it exceeds every exact TAT).
  local function last_instant() return (END_SEC - T.now_sec) * NS_PER_SEC + END_NS end

  local ALLOWED, WAIT, ABOVE_LIMIT, OVERFLOW = 1, 2, 3, 4

  local function admit(p, s, now, cost, max_wait)
    -- A TAT far in the past may have rounded when it moved frames; it loses to now anyway.
    if not exact(p.tolerance) or s.tat > EXACT then return { outcome = OVERFLOW } end
    local tat = math.max(s.tat, now)
    -- Above the limit a request can never conform: redis-cell answers retry_after -1.
    if cost > p.burst + 1 then return { outcome = ABOVE_LIMIT, tat = tat, new_tat = tat, wait = 0 } end
    local new_tat = tat + p.interval * cost -- interval * cost <= tolerance, exact
    if new_tat > last_instant() or not exact(new_tat) then return { outcome = OVERFLOW } end
    local wait = new_tat - p.tolerance - now
    local ok = wait <= 0 or wait <= max_wait
    return { outcome = ok and ALLOWED or WAIT, tat = tat, new_tat = new_tat, wait = wait }
  end

  -- redis-cell's (DVT - ttl) / T in whole microseconds; the same multiplication and
  -- correction as the C++, which give the integer quotient.
  local function remaining(p, ttl)
    local next = p.tolerance - ttl
    if next <= -p.interval then return 0 end
    local x = idiv(next, 1000)
    if x <= 0 then return 0 end
    local q = math.floor(x * p.per_interval_us)
    if q * p.interval_us > x then q = q - 1 end
    if (q + 1) * p.interval_us <= x then q = q + 1 end
    return q
  end

  local function decide(p, s, now, cost, max_wait)
    local a = admit(p, s, now, cost, max_wait)
    if a.outcome == ALLOWED then
      local ttl = a.new_tat - now
      return decision(true, math.max(a.wait, 0), remaining(p, ttl), 0, ttl, limit(p)), { tat = a.new_tat }, false
    elseif a.outcome == OVERFLOW then
      return overflowed(), s, false
    end
    local retry = a.wait
    if a.outcome == ABOVE_LIMIT then retry = NEVER end
    return denied(retry, remaining(p, a.tat - now), a.tat - now, limit(p)), s, false
  end

  ALG['gcra'] = {
    params = function(a)
      return { count = a[1], period = a[2], burst = a[3], interval = a[4], tolerance = a[5],
               interval_us = a[6], per_interval_us = a[7] }
    end,

    start = function(p, now) return { tat = now } end,

    decide = decide,

    -- Leasing: the most permits redis-cell would grant now (allowed is monotone in the cost,
    -- so a bisection over decide itself finds it), charged as that decision charges them.
    take = function(p, s, now, want) return take_largest(decide, p, s, now, math.min(want, p.burst + 1)) end,

    encode = function(p, s) return { s.tat } end,
    decode = function(p, f, shift_sec) return { tat = f[1] + shift_sec * NS_PER_SEC } end,

    -- count_denied (core::DeniedCharge<Gcra>): the TAT moves on by cost intervals as if
    -- admitted, to at most now + 2 x tolerance (one capacity of debt).
    charge_denied = function(p, s, now, cost)
      local cap = now + 2 * p.tolerance
      local tat = math.max(s.tat, now)
      if tat >= cap then return { tat = math.max(s.tat, cap) } end
      local room = cap - tat
      if cost > idiv(room, p.interval) then return { tat = cap } end
      return { tat = tat + cost * p.interval }
    end,

    -- Idle once the TAT has passed.
    ttl = function(p, s, now) return s.tat - now end,

    -- on_change: proportional (core/rescale.hpp; Gcra::retune keeps the TAT): the time ahead
    -- of now, what is used, scales with the tolerance, T * (burst + 1).
    rescale = function(from, to, s, now)
      if s.tat <= now or from.tolerance <= 0 then return s end
      return { tat = now + scaled(s.tat - now, to.tolerance, from.tolerance) }
    end,
  }

  -- A cost settled after the response (core::Settle<Gcra>): more is charged as a counted
  -- refusal is; a refund moves the TAT back by its intervals, never before now.
  ALG['gcra'].settle = function(p, s, now, delta)
    if delta >= 0 then return ALG['gcra'].charge_denied(p, s, now, delta) end
    if s.tat <= now then return s end
    if -delta > idiv(s.tat - now, p.interval) then return { tat = now } end
    return { tat = s.tat + delta * p.interval }
  end
end

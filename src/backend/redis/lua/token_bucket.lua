-- token-bucket (core/token_bucket.hpp): golang.org/x/time/rate 0.3.0's float64 bucket for the
-- Redis backend, ported operation for operation so Redis computes the very doubles C++ does.
--
-- Params (C++ field order): rate.count, rate.period_ns, burst, per_second, nanos_per_token
-- (the last two are sent as %.17g, so they arrive as the doubles C++ derived).
-- State: tokens (a double, %.17g in Redis), and the last update as whole seconds relative to
-- the frame plus nanoseconds within that second. Splitting `last` keeps now - last exact
-- after idle gaps beyond 2^53 ns (104 days), where a single frame-relative number would round;
-- go_seconds converts whole seconds and the nanosecond rest separately anyway.
LAZY['token-bucket'] = function()
  -- Go's float -> Duration conversion saturates (refmath::go_duration, java_d2l); 2^63 stands
  -- for INT64_MAX here. Redis cannot reply 2^63, so a saturated duration leaves the script as
  -- the largest double below it, which the codec reads as "saturated" (kForever).
  local SAT = 9223372036854775808
  local MAXD = 9223372036854774784
  -- The script's TTL stays below what SET PX and Lua's %.14g number printing accept; 9.3e18 ns
  -- is past C++'s whole int64 time line, so nothing idles later than it anyway.
  local TTL_CAP = 9.3e18

  local function go_duration(ns)
    if ns ~= ns then return 0 end
    if ns >= SAT then return SAT end
    if ns <= -SAT then return -SAT end
    if ns >= 0 then return math.floor(ns) end
    return math.ceil(ns)
  end
  local function wire(d)
    if d >= SAT then return MAXD end
    return d
  end

  -- go_seconds(now - min(last, now)) with last = (sec, ns): the whole seconds and the
  -- nanosecond rest of the (non-negative) difference, each converted as Go does.
  local function elapsed_seconds(s, now)
    local rest = now - s.ns
    local sec = -s.sec
    if sec < 0 or (sec == 0 and rest <= 0) then return 0 end -- last >= now: min() picks now
    local carry = fdiv(rest, NS_PER_SEC)
    sec = sec + carry
    rest = rest - carry * NS_PER_SEC
    return sec + rest / 1e9
  end

  local function refill_time(p, missing) return go_duration(missing * p.nanos_per_token) end

  local function advance(p, s, now)
    local tokens = s.tokens + elapsed_seconds(s, now) * p.per_second
    return math.min(tokens, p.burst)
  end

  local function duration_for(p, tokens) return go_duration(1e9 * (tokens / p.per_second)) end

  local function at(tokens, now) return { tokens = tokens, sec = 0, ns = now } end
  -- `tokens` as of the later of the state's last update and now (C++ max(s.last, now)).
  local function at_latest(s, now, tokens)
    if s.sec > 0 or (s.sec == 0 and s.ns > now) then return { tokens = tokens, sec = s.sec, ns = s.ns } end
    return at(tokens, now)
  end

  local function decide(p, s, now, cost, max_wait)
    local available = advance(p, s, now)
    local after = available - cost
    local wait = 0
    if after < 0 then wait = duration_for(p, -after) end
    local reset = refill_time(p, p.burst - math.max(after, 0))
    if cost <= p.burst and wait <= max_wait then
      local d = decision(true, wire(wait), math.floor(math.max(after, 0)), 0, wire(reset), p.burst)
      return d, at(after, now), false
    end
    local retry = NEVER
    if cost <= p.burst then retry = wire(math.max(wait, 1)) end
    local d = denied(retry, math.floor(available), wire(refill_time(p, p.burst - available)), p.burst)
    if max_wait > 0 and cost <= p.burst then
      -- ReserveN succeeded, then CancelAt(now) restored the tokens at now.
      return d, at(math.min(after + cost, p.burst), now), true
    end
    return d, s, false
  end

  ALG['token-bucket'] = {
    params = function(a)
      return { count = a[1], period = a[2], burst = a[3], per_second = a[4], nanos_per_token = a[5] }
    end,

    start = function(p, now) return at(p.burst, now) end,

    decide = decide,

    -- Leasing: the most permits AllowN would grant now (allowed is monotone in the cost, so a
    -- bisection over decide itself finds it), charged exactly as that AllowN charges them.
    take = function(p, s, now, want) return take_largest(decide, p, s, now, math.min(want, p.burst)) end,

    -- count_denied (core::DeniedCharge<TokenBucket>): the tokens are taken though refused,
    -- down to minus the burst; `last` is the later of the state's and now.
    charge_denied = function(p, s, now, cost)
      return at_latest(s, now, math.max(advance(p, s, now) - cost, -p.burst))
    end,

    -- A cost settled after the response (core::Settle<TokenBucket>): more is taken as a
    -- counted refusal takes it; a refund puts the tokens back, up to a full bucket.
    settle = function(p, s, now, delta)
      if delta >= 0 then return ALG['token-bucket'].charge_denied(p, s, now, delta) end
      return at_latest(s, now, math.min(advance(p, s, now) - delta, p.burst))
    end,

    encode = function(p, s) return { s.tokens, s.sec, s.ns } end,
    decode = function(p, f, shift_sec) return { tokens = f[1], sec = f[2] + shift_sec, ns = f[3] } end,

    -- Until the bucket is full again (C++ idle()); padded by a millisecond and a relative 1e-9
    -- so the float rounding of this estimate can only lengthen it.
    ttl = function(p, s, now)
      local missing = p.burst - advance(p, s, now)
      if missing <= 0 then return 0 end
      local t = missing / p.per_second * 1e9
      t = t + t * 1e-9 + 1000000
      if t > TTL_CAP then return TTL_CAP end
      return t
    end,

    -- on_change: proportional (core/rescale.hpp after TokenBucket::retune): refilled to now
    -- under the old rate (x/time/rate's SetLimitAt), then the tokens scale with the burst, in
    -- the C++'s order of operations, at most the new burst.
    retune = function(from, to, s, now) return at(advance(from, s, now), now) end,
    rescale = function(from, to, s, now)
      if from.burst <= 0 then return s end
      return { tokens = math.min(s.tokens * to.burst / from.burst, to.burst), sec = s.sec, ns = s.ns }
    end,
  }
end

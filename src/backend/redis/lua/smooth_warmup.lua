-- smooth-warmup (core/smooth_warmup.hpp) for the Redis script: Guava 31.1 SmoothWarmingUp,
-- the shape plugged into guava_smooth.lua's SmoothRateLimiter; starts cold (max permits).
--
-- Params (C++ field order): rate.count, rate.period_ns, warmup_ns, cold_factor,
-- warmup_micros, permits_per_second, stable_interval_micros, threshold_permits, max_permits,
-- slope (the doubles as make() computed them, sent %.17g).
LAZY['smooth-warmup'] = function() load_smooth()
  local java_d2l = SMOOTH.java_d2l

  -- Guava's shape, in microseconds: below thresholdPermits a stored permit costs the stable
  -- interval; above it, the cost rises linearly (slope) to cold-factor times the stable
  -- interval at maxPermits. Taking stored permits costs the area under that line.
  local function permits_to_time(p, permits)
    return p.stable_interval_micros + permits * p.slope
  end

  ALG['smooth-warmup'] = SMOOTH.limiter({
    params = function(a)
      local p = { count = a[1], period = a[2], warmup = a[3], cold_factor = a[4],
                  warmup_micros = a[5], permits_per_second = a[6], stable_interval_micros = a[7],
                  threshold_permits = a[8], max_permits = a[9], slope = a[10] }
      p.cool_down_interval = p.warmup_micros / p.max_permits
      return p
    end,
    stable_interval = function(p) return p.stable_interval_micros end,
    cool_down_interval = function(p) return p.cool_down_interval end,
    max_permits = function(p) return p.max_permits end,
    initial_permits = function(p) return p.max_permits end,

    stored_permits_to_wait_time = function(p, stored, to_take)
      local above_threshold = stored - p.threshold_permits
      local micros = 0
      if above_threshold > 0.0 then
        local take_above = math.min(above_threshold, to_take)
        local length = permits_to_time(p, above_threshold) +
            permits_to_time(p, above_threshold - take_above)
        micros = java_d2l(take_above * length / 2.0)
        to_take = to_take - take_above
      end
      micros = micros + java_d2l(p.stable_interval_micros * to_take)
      return micros
    end,
  })
end

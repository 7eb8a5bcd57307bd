-- smooth-bursty (core/smooth_bursty.hpp) for the Redis script: Guava 31.1 SmoothBursty, the
-- shape plugged into guava_smooth.lua's SmoothRateLimiter; starts with no stored permits.
--
-- Params (C++ field order): rate.count, rate.period_ns, max_burst_ns, permits_per_second,
-- stable_interval_micros, max_permits (the last three as make() computed them, sent %.17g).
LAZY['smooth-bursty'] = function()
  load_smooth()
  ALG['smooth-bursty'] = SMOOTH.limiter({
    params = function(a)
      return { count = a[1], period = a[2], max_burst = a[3], permits_per_second = a[4],
               stable_interval_micros = a[5], max_permits = a[6] }
    end,
    stable_interval = function(p) return p.stable_interval_micros end,
    cool_down_interval = function(p) return p.stable_interval_micros end,
    max_permits = function(p) return p.max_permits end,
    initial_permits = function(p) return 0.0 end,
    stored_permits_to_wait_time = function(p, stored, to_take) return 0 end,
  })
end

-- The token bucket of Spring Cloud Gateway's RedisRateLimiter (request_rate_limiter.lua, as
-- docs/references and ANCHORS.md section 6 describe it), written anew for the benchmark:
-- capacity `burst`, refilled at `rate` per second, a missing key starts full, time from
-- Redis TIME, both keys expire after twice the fill time.
-- KEYS[1]: the bucket's key prefix (".tokens" and ".timestamp" are appended, so that one
-- redis-benchmark __rand_int__ names both keys); ARGV: rate, capacity, requested.
local tokens_key = KEYS[1] .. ".tokens"
local timestamp_key = KEYS[1] .. ".timestamp"

local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local requested = tonumber(ARGV[3])

local time = redis.call("TIME")
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000

local fill_time = capacity / rate
local ttl = math.floor(fill_time * 2)

local last_tokens = tonumber(redis.call("GET", tokens_key))
if last_tokens == nil then
  last_tokens = capacity
end
local last_refreshed = tonumber(redis.call("GET", timestamp_key))
if last_refreshed == nil then
  last_refreshed = 0
end

local delta = math.max(0, now - last_refreshed)
local filled_tokens = math.min(capacity, last_tokens + delta * rate)
local allowed = filled_tokens >= requested
local new_tokens = filled_tokens
local allowed_num = 0
if allowed then
  new_tokens = filled_tokens - requested
  allowed_num = 1
end

if ttl > 0 then
  redis.call("SETEX", tokens_key, ttl, new_tokens)
  redis.call("SETEX", timestamp_key, ttl, now)
end

return { allowed_num, new_tokens }

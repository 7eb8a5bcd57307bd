-- wrk script for bench/decision/check_http.sh: GET /v1/check/{rule}?key=N with N random in
-- 1..1000000, so that most checks make a new key (table inserts, not only lookups).
-- wrk -s random_key.lua http://127.0.0.1:PORT/v1/check/RULE
local base
init = function(args)
  base = wrk.path .. "?key="
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16))
end
request = function()
  return wrk.format("GET", base .. math.random(1, 1000000))
end

-- POST /v1/report for a key never reported before: {"rule":"tokens","key":"t<thread>-<n>",...}.
-- Each thread stops after `target` responses (the first script argument); a response that is
-- not 200 is counted in the summary's non-2xx line, which the test reads.
local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end
function init(args)
  n, done_count, target = 0, 0, tonumber(args[1])
  prefix = "t" .. id .. "-"
end
function request()
  n = n + 1
  local body = '{"rule":"tokens","key":"' .. prefix .. n .. '","cost":3}'
  return wrk.format("POST", "/v1/report", {["Content-Type"] = "application/json"}, body)
end
function response(status, headers, body)
  done_count = done_count + 1
  if done_count >= target then wrk.thread:stop() end
end

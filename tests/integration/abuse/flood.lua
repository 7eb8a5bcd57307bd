-- Every request a key never seen before: X-Key: t<thread>-<n>. Each thread stops after
-- `target` responses (the first script argument).
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
  return wrk.format("GET", "/flood", {["X-Key"] = prefix .. n})
end
function response(status, headers, body)
  done_count = done_count + 1
  if done_count >= target then wrk.thread:stop() end
end

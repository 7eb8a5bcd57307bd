-- wrk script for the integration tests (wrk_support.py): counts responses by status and prints
-- them, with wrk's socket errors and latency, as lines the tests parse:
--   status 200 12345
--   errors connect 0 read 0 write 0 timeout 0
--   latency max_us 1234 p99_us 567
-- Arguments (optional): CLOSE_EVERY (every Nth request of a thread asks Connection: close, so
-- connections churn; 0: never), STOP_AFTER (a thread stops after that many responses; 0: never;
-- wrk itself runs on until its -d, so the caller stops it).
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  statuses = {}
  sent, answered = 0, 0
  close_every = tonumber(args[1] or "0")
  stop_after = tonumber(args[2] or "0")
  plain = wrk.format("GET", wrk.path)
  closing = wrk.format("GET", wrk.path, {["Connection"] = "close"})
end

function request()
  sent = sent + 1
  if close_every > 0 and sent % close_every == 0 then
    return closing
  end
  return plain
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  answered = answered + 1
  if stop_after > 0 and answered >= stop_after then
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for status, n in pairs(t:get("statuses")) do
      total[status] = (total[status] or 0) + n
    end
  end
  for status, n in pairs(total) do
    io.write(string.format("status %d %d\n", status, n))
  end
  local e = summary.errors
  io.write(string.format("errors connect %d read %d write %d timeout %d\n", e.connect, e.read,
                         e.write, e.timeout))
  io.write(string.format("latency max_us %d p99_us %d\n", latency.max, latency:percentile(99)))
end

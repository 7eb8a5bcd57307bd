-- wrk script for the syscall pass of bench/gateway/run.sh: stops after WRK_REQUESTS responses
-- (one wrk thread), so that every gateway is counted over the same number of requests whatever
-- its speed under the tracer. thread:stop() stops the requests; wrk's main thread would still
-- sleep out -d, so SIGINT (which wrk takes as "stop and report") ends the run. The shell that
-- os.execute starts is wrk's child ($PPID is wrk); the kill comes from behind it, once
-- system() has stopped ignoring SIGINT in wrk.
local limit = tonumber(os.getenv("WRK_REQUESTS") or "100000")
local seen = 0
function response(status, headers, body)
  seen = seen + 1
  if seen == limit then
    wrk.thread:stop()
    os.execute("(sleep 0.2; kill -INT $PPID) &")
  end
end

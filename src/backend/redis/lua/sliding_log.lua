-- sliding-log (core/sliding_log.hpp) for the Redis script: allowed iff the cost allowed in
-- (t - window, t] plus this cost stays within `limit`, decided as the core does.
--
-- Params (C++ field order): limit, window_ns. State: the log, oldest first, as pairs
-- (at ns frame-relative, cost) after the base second; `sum` is recomputed on load. Requests at
-- the same instant share an entry and every allowed cost is >= 1, so a stored log holds at
-- most `limit` entries. As in the core, deciding only reads the log and the committed state
-- forgets what has left the window (commit), so a stored log spans less than one window.
--
-- Times stay exact while the window is below 2^53 ns minus a second (104 days): every entry
-- a decision reads is then within (now - window, now]. Older entries loaded after a long
-- gap may be rounded, but rounding keeps them below now - window, i.e. expired, and an
-- expired entry's time only feeds answers for requests that are allowed anyway.
LAZY['sliding-log'] = function()
  local MAX_WINDOW = EXACT - NS_PER_SEC

  local M = {}

  M.params = function(a) return { limit = a[1], window = a[2] } end

  M.start = function(p, now) return { at = {}, cost = {}, n = 0, sum = 0 } end

  -- Cost of the entries that have left the window (t - window, now] by `now`.
  local function expired_cost(p, s, now)
    local gone = 0
    for k = 1, s.n do
      if s.at[k] > now - p.window then break end
      gone = gone + s.cost[k]
    end
    return gone
  end

  -- The wait until enough of the oldest entries have left the window.
  local function retry_after(p, s, now, cost)
    if cost > p.limit then return NEVER end
    local in_window = s.sum
    for k = 1, s.n do
      if s.at[k] > now - p.window and in_window + cost <= p.limit then break end
      in_window = in_window - s.cost[k]
      if in_window + cost <= p.limit then
        local wait = p.window - (now - s.at[k])
        if wait < 1 then wait = 1 end
        return wait
      end
    end
    return 1
  end

  -- The core's commit: forget what left the window by `at`, then log this cost (a new state;
  -- the one read stays as it was for a denial).
  local function commit(p, s, at, cost)
    local r = { at = {}, cost = {}, n = 0, sum = 0 }
    for k = 1, s.n do
      if s.at[k] > at - p.window then
        r.n = r.n + 1
        r.at[r.n] = s.at[k]
        r.cost[r.n] = s.cost[k]
        r.sum = r.sum + s.cost[k]
      end
    end
    if cost == 0 then return r end
    if r.n > 0 and r.at[r.n] == at then
      r.cost[r.n] = r.cost[r.n] + cost
    else
      r.n = r.n + 1
      r.at[r.n] = at
      r.cost[r.n] = cost
    end
    r.sum = r.sum + cost
    return r
  end

  local function refused(p) return not (p.window <= MAX_WINDOW and exact(p.limit)) end

  M.decide = function(p, s, now, cost, max_wait)
    if refused(p) then return overflowed(), s, false end
    local in_window = s.sum - expired_cost(p, s, now)
    local reset = 0
    if s.n > 0 then reset = p.window - (now - s.at[s.n]) end
    if cost <= p.limit - in_window then
      return decision(true, 0, p.limit - in_window - cost, 0, p.window, p.limit),
          commit(p, s, now, cost), false
    end
    return denied(retry_after(p, s, now, cost), p.limit - in_window, reset, p.limit), s, false
  end

  -- Leasing: as many permits as a reject-mode decide would allow now, charged at once; none
  -- leaves the state as it was.
  M.take = function(p, s, now, want)
    if refused(p) then return 0, overflowed(), s end
    local g = p.limit - (s.sum - expired_cost(p, s, now))
    if g > want then g = want end
    if g > 0 then
      local d, next_state = M.decide(p, s, now, g, 0)
      return g, d, next_state
    end
    local d = M.decide(p, s, now, 1, 0)
    return 0, d, s
  end

  M.encode = function(p, s)
    local f = {}
    for k = 1, s.n do
      f[2 * k - 1] = s.at[k]
      f[2 * k] = s.cost[k]
    end
    return f
  end

  M.decode = function(p, f, shift_sec)
    local s = { at = {}, cost = {}, n = 0, sum = 0 }
    local shift = shift_sec * NS_PER_SEC
    for k = 1, #f - 1, 2 do
      s.n = s.n + 1
      s.at[s.n] = f[k] + shift
      s.cost[s.n] = f[k + 1]
      s.sum = s.sum + f[k + 1]
    end
    return s
  end

  -- idle() once the newest entry has left the window.
  M.ttl = function(p, s, now)
    if s.n == 0 then return 0 end
    return s.at[s.n] + p.window - now
  end

  ALG['sliding-log'] = M
end

-- fixed-window (core/fixed_window.hpp): windows at multiples of `window` from t=0, or calendar
-- days, weeks or months; allowed iff the window's count plus the cost stays within `limit`;
-- denials count only with flag "d".
--
-- Params (C++ field order): limit, window_ns, and for a calendar window (align=calendar) a
-- number naming its time zone. A calendar window also has flag "c": its bounds follow the
-- params, four Unix seconds from the instance's own clock, the previous window's start, the
-- current one's, the next one's and its end (the instance knows the zone's calendar; Redis's
-- clock picks among them). State: the window's start (ns, frame-relative) and its count; the
-- start is stored instead of the index so it shifts with the frame.
LAZY['fixed-window'] = function()
  -- The window `now` is in: its start (frame-relative) and the time left to its end; nil when
  -- the arithmetic would leave the exact range.
  local function window_of(p, now)
    if p.cal == nil then
      local phase = now_phase(p.window)
      if phase == nil then return nil end
      return now - phase, p.window - phase
    end
    -- Redis's clock in the instance's windows: the one that holds it, so an instance whose
    -- clock is off by less than a window counts where every other does. Off by more (outside
    -- all three), the nearest window.
    local b, sec = p.cal, T.now_sec
    local i = 3
    for k = 1, 3 do
      if sec < b[k + 1] then
        i = k
        break
      end
    end
    local start = now - ((sec - b[i]) * NS_PER_SEC + T.now_ns)
    local left = (b[i + 1] - sec) * NS_PER_SEC - T.now_ns
    if not exact(start) or not exact(left) then return nil end
    if left < 1 then left = 1 end
    return start, left
  end

  local M = {}

  M.params = function(a) return { limit = a[1], window = a[2], zone = a[3] } end

  M.start = function(p, now)
    local start = window_of(p, now)
    return { start = start or now, count = 0 }
  end

  M.decide = function(p, s, now, cost, max_wait)
    local start, reset = window_of(p, now)
    if start == nil then return overflowed(), s, false end
    local count = 0
    if s.start == start then count = s.count end
    if cost <= p.limit - count then
      local after = count + cost
      return decision(true, 0, p.limit - after, 0, reset, p.limit), { start = start, count = after }, false
    end
    local retry = reset
    if cost > p.limit then retry = NEVER end
    return denied(retry, p.limit - count, reset, p.limit), s, false
  end

  -- count_denied (core::DeniedCharge<FixedWindow>): the window fills, to its limit at most.
  M.charge_denied = function(p, s, now, cost)
    local start = window_of(p, now)
    local count = 0
    if s.start == start then count = s.count end
    return { start = start, count = math.min(p.limit, count + cost) }
  end

  M.encode = function(p, s) return { s.start, s.count } end
  M.decode = function(p, f, shift_sec) return { start = f[1] + shift_sec * NS_PER_SEC, count = f[2] } end

  -- The count matters until its window ends. A calendar window's end is found from the
  -- script's instant (the state was written at it), whatever frame `now` is in.
  M.ttl = function(p, s, now)
    if p.cal ~= nil then
      local _, left = window_of(p, T.now_ns)
      return left or p.window
    end
    return s.start + p.window - now
  end

  -- on_change: proportional (core/rescale.hpp): a new window length or zone starts a new
  -- window (FixedWindow::retune), the same one scales the count by the limits.
  M.retune = function(from, to, s, now)
    if from.window ~= to.window or from.zone ~= to.zone then return M.start(to, now) end
    return s
  end
  M.rescale = function(from, to, s, now)
    if from.limit <= 0 or from.window ~= to.window then return s end
    return { start = s.start, count = scaled(s.count, to.limit, from.limit) }
  end

  -- Leasing: as many permits as a reject-mode decide would allow now (the window's room),
  -- charged at once; none leaves the state as it was.
  M.take = function(p, s, now, want)
    local start = window_of(p, now)
    if start == nil then return 0, overflowed(), s end
    local count = 0
    if s.start == start then count = s.count end
    local g = p.limit - count
    if g > want then g = want end
    if g > 0 then
      local d, next_state = M.decide(p, s, now, g, 0)
      return g, d, next_state
    end
    local d = M.decide(p, s, now, 1, 0)
    return 0, d, s
  end

  -- A cost settled after the response (core::Settle<FixedWindow>): more fills the window as a
  -- counted refusal does; a refund gives back within the window it was taken in only. A
  -- window beyond the script's exact range decides nothing (overflow), so nothing is settled.
  M.settle = function(p, s, now, delta)
    local start = window_of(p, now)
    if start == nil then return s end
    if delta >= 0 then return M.charge_denied(p, s, now, delta) end
    if s.start ~= start then return s end
    return { start = s.start, count = math.max(0, s.count + delta) }
  end

  ALG['fixed-window'] = M
end

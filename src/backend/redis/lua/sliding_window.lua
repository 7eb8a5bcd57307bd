-- sliding-window (core/sliding_window.hpp) for the Redis script: the two-window estimate
-- prev * (window - t mod window) / window + curr + cost <= limit, decided as the core does.
--
-- Params (C++ field order): limit, window_ns. State: the start (ns, frame-relative) of the
-- window `curr` counts, prev, curr; the start is stored instead of the core's index so it
-- shifts with the frame (start == index * window in absolute time).
--
-- The core compares in 128-bit integers multiplied through by `window`. Here every product
-- of two 52-bit numbers goes through muldiv (floor and remainder of a*b/c, exact), and the
-- core's comparisons are rewritten around ceil(prev*left/window), which is at most prev:
--   prev*left + (curr+cost)*w <= limit*w   <=>  ceil(prev*left/w) <= limit - curr - cost
--   (limit*w - total) / w                  ==   limit - curr - cost - ceil(prev*left/w)
-- Limits and windows from 2^52 up (52 days of nanoseconds) are refused as overflow.
LAZY['sliding-window'] = function()
  local LIMIT = EXACT / 2

  -- ceil(prev * left / w): prev's weighted share of the current window, rounded up.
  local function share(prev, left, w)
    local q, r = muldiv(prev, left, w)
    if r > 0 then q = q + 1 end
    return q
  end

  local M = {}

  M.params = function(a) return { limit = a[1], window = a[2] } end

  M.start = function(p, now)
    local phase = now_phase(p.window)
    return { start = now - (phase or 0), prev = 0, curr = 0 }
  end

  -- The state as seen from `now`: windows rolled forward. `start` is the window's start.
  local function roll(p, s, start)
    if start == s.start then return s end
    if start == s.start + p.window then return { start = start, prev = s.curr, curr = 0 } end
    return { start = start, prev = 0, curr = 0 }
  end

  -- Earliest wait after which prev' * (w - x)/w + curr' + cost <= limit: later in this window
  -- as prev's weight shrinks, else in the next window where curr becomes prev.
  local function retry_after(p, s, offset, cost)
    if cost > p.limit then return NEVER end
    local w = p.window
    -- smallest x in [0, w) with prev*(w-x) <= (limit-curr-cost)*w, or -1
    local function earliest_offset(prev, curr)
      local room = p.limit - curr - cost -- the core's room, divided by w
      if room < 0 then return -1 end
      if prev == 0 then return 0 end
      if room >= prev then return 0 end -- room*w/prev >= w: x <= 0
      local x = w - muldiv(room, w, prev)
      if x < 0 then x = 0 end
      return x
    end
    local here = earliest_offset(s.prev, s.curr)
    if here >= 0 and here < w and here > offset then return here - offset end
    local next = earliest_offset(s.curr, 0)
    if next >= 0 and next < w then return w - offset + next end
    return 2 * w - offset
  end

  M.decide = function(p, s0, now, cost, max_wait)
    local w = p.window
    local phase = now_phase(w)
    if phase == nil or not (p.limit < LIMIT) then return overflowed(), s0, false end
    local s = roll(p, s0, now - phase)
    local left = w - phase -- window - t mod window
    local weighted = share(s.prev, left, w)
    local reset = left
    if s.curr > 0 then reset = left + w end
    local room = p.limit - s.curr - cost
    if room >= 0 and weighted <= room then
      local rem = room - weighted
      return decision(true, 0, rem, 0, reset, p.limit),
          { start = s.start, prev = s.prev, curr = s.curr + cost }, false
    end
    -- limit*w - before > 0  <=>  floor(prev*left/w) < limit - curr
    local before_room = p.limit - s.curr
    local rem = 0
    if before_room > 0 and muldiv(s.prev, left, w) < before_room then rem = before_room - weighted end
    return denied(retry_after(p, s, phase, cost), rem, reset, p.limit), s0, false
  end

  -- Leasing: as many permits as a reject-mode decide would allow now (its remaining before
  -- the cost), charged at once; none leaves the state as it was.
  M.take = function(p, s0, now, want)
    local phase = now_phase(p.window)
    if phase == nil or not (p.limit < LIMIT) then return 0, overflowed(), s0 end
    local s = roll(p, s0, now - phase)
    local g = p.limit - s.curr - share(s.prev, p.window - phase, p.window)
    if g > want then g = want end
    if g > 0 then
      local d, next_state = M.decide(p, s0, now, g, 0)
      return g, d, next_state
    end
    local d = M.decide(p, s0, now, 1, 0)
    return 0, d, s0
  end

  -- count_denied (core::DeniedCharge<SlidingWindow>): curr fills, to the limit at most, and
  -- carries into the next window's weighted share.
  M.charge_denied = function(p, s0, now, cost)
    local s = roll(p, s0, now - now_phase(p.window))
    return { start = s.start, prev = s.prev, curr = math.min(p.limit, s.curr + cost) }
  end

  -- A cost settled after the response (core::Settle<SlidingWindow>): more fills curr as a
  -- counted refusal does; a refund gives back within the window it was taken in only.
  M.settle = function(p, s0, now, delta)
    local phase = now_phase(p.window)
    if phase == nil then return s0 end
    if delta >= 0 then return M.charge_denied(p, s0, now, delta) end
    local s = roll(p, s0, now - phase)
    if s.start ~= s0.start then return s end
    return { start = s.start, prev = s.prev, curr = math.max(0, s.curr + delta) }
  end

  M.encode = function(p, s) return { s.start, s.prev, s.curr } end
  M.decode = function(p, f, shift_sec)
    return { start = f[1] + shift_sec * NS_PER_SEC, prev = f[2], curr = f[3] }
  end

  -- idle() once roll() leaves nothing: curr counts for two windows (as curr, then as prev).
  M.ttl = function(p, s, now)
    if s.curr > 0 then return s.start + 2 * p.window - now end
    if s.prev > 0 then return s.start + p.window - now end
    return 0
  end

  -- on_change: proportional (core/rescale.hpp): a new window length starts afresh
  -- (SlidingWindow::retune), the same one scales both counts by the limits.
  M.retune = function(from, to, s, now)
    if from.window ~= to.window then return M.start(to, now) end
    return s
  end
  M.rescale = function(from, to, s, now)
    if from.limit <= 0 or from.window ~= to.window then return s end
    return { start = s.start, prev = scaled(s.prev, to.limit, from.limit),
             curr = scaled(s.curr, to.limit, from.limit) }
  end

  ALG['sliding-window'] = M
end
